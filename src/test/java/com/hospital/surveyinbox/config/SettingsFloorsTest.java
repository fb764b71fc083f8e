package com.hospital.surveyinbox.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Durations below what they can work with stop the boot, naming the key; a bare number is read in the unit the
 * setting is thought in (a response timeout of 0 was no timeout at all to the HTTP client; "30" meant 30 ms; a
 * retention of "90" removed every DEAD row's payload at the next run), and a zone Quartz would read as GMT is refused;
 * so are values meant as milliseconds (ceilings), base URLs the routes cannot extend, and switches not written
 * true or false.
 */
class SettingsFloorsTest {

    private final ApplicationContextRunner runner = com.hospital.surveyinbox.support.BoundSettings.runner();

    private void refused(String setting, String key) {
        refusedTogether(key, setting);
    }

    private void refusedTogether(String key, String... settings) {
        runner.withPropertyValues(settings).run(context -> {
            assertThat(context).as(settings[0]).hasFailed();
            assertThat(context.getStartupFailure()).as(settings[0]).rootCause().hasMessageContaining(key);
        });
    }

    @Test
    void aDurationBelowItsFloorStopsTheBootNamingTheKey() {
        refused("adapter.http.response-timeout=0", "http.responseTimeout");
        refused("adapter.http.connect-timeout=PT0.05S", "http.connectTimeout");
        refused("adapter.inbox.stuck-processing-after=PT0S", "inbox.stuckProcessingAfter");
        refused("adapter.inbox.lost-event-after=PT0.5S", "inbox.lostEventAfter");
        refused("adapter.inbox.retry-delay=-PT1S", "inbox.retryDelay");
        refused("adapter.inbox.bulk-requeue-within=PT2M", "inbox.bulkRequeueWithin"); // the web server's stop cut it at 120 s
        refused("adapter.retention.dead=PT12H", "retention.dead");
        refused("adapter.retention.completed=PT1M", "retention.completed");
        refused("adapter.reception.store-timeout=0", "reception.storeTimeout");
        refused("adapter.migration.lock-timeout=0", "migration.lockTimeout");
        refused("adapter.circuit.open-duration=0", "circuit.openDuration");
        refused("adapter.cache.consent-ttl=0", "cache.consentTtl");
        refused("adapter.crypto.key-wait=PT5M", "crypto.keyWait");
        // a commit's check waited behind the writers for the only connections: a 503 for a row that may be stored
        refused("adapter.reception.pool-size=2", "adapter.reception.pool-size (2) must be at least adapter.reception.group-insert.writers + 1 (3)");
        refusedTogether("adapter.reception.pool-size (4) must be at least", "adapter.reception.group-insert.writers=4",
                "adapter.reception.pool-size=4");
        runner.withPropertyValues("adapter.reception.pool-size=1", "adapter.reception.group-insert.enabled=false")
                .run(context -> assertThat(context).hasNotFailed());
    }

    /**
     * A bare number is in the setting's unit (seconds): a value meant as milliseconds (30000) is a ceiling's breach,
     * not an open circuit deferring every row for eight hours.
     */
    @Test
    void aSettingAboveItsCeilingStopsTheBootNamingTheKey() {
        refused("adapter.circuit.open-duration=30000", "circuit.openDuration");
        refusedTogether("inbox.retryDelay", "adapter.inbox.retry-delay=60000", "adapter.inbox.reply-max-retry-delay=P1D");
        // a tick publishing for 8 hours (no lost-event republish, no stuck reset meanwhile); replies waiting 41 days;
        // a migration queueing every insert for 83 minutes; the cache out for as long; receptions held for hours
        refused("adapter.inbox.redeliver-publish-deadline=30000", "inbox.redeliverPublishDeadline");
        refused("adapter.inbox.reply-max-retry-delay=3600000", "inbox.replyMaxRetryDelay");
        refused("adapter.migration.lock-timeout=5000", "migration.lockTimeout");
        refused("adapter.cache.redis-pause=5000", "cache.redisPause");
        refused("adapter.crypto.key-wait=86400000", "crypto.keyWait"); // seconds: 1,000 days, not a day in milliseconds
        refused("adapter.reception.store-timeout=5000", "reception.storeTimeout");
        refused("adapter.inbox.lost-event-after=120000", "inbox.lostEventAfter");
        refused("adapter.inbox.stuck-processing-after=900000", "inbox.stuckProcessingAfter");
        refused("adapter.http.response-timeout=5000", "http.responseTimeout");
        refused("adapter.http.connect-timeout=1000", "http.connectTimeout");
        refused("adapter.cache.consent-ttl=300000", "cache.consentTtl");
        refused("adapter.inbox.redeliver-batch-size=100000", "inbox.redeliverBatchSize");
        refused("adapter.retention.batch-size=100000", "retention.batchSize");
    }

    /**
     * A topic name the broker refuses was taken for an outage: receptions answered 200 and stored, no event ever
     * published, "tried again every 15 s" in the log. It stops the boot.
     */
    @Test
    void aTopicNameKafkaRefusesStopsTheBootNamingTheKey() {
        refused("adapter.kafka.topic=survey:send-info", "kafka.topic");
        refused("adapter.kafka.topic=survey/received", "kafka.topic");
        refused("adapter.kafka.topic=..", "kafka.topic");
        refused("adapter.kafka.topic=" + "t".repeat(250), "kafka.topic");
        runner.withPropertyValues("adapter.kafka.topic=survey-inbox.received_v2").run(context -> assertThat(context).hasNotFailed());
    }

    /**
     * The redelivery job is the recovery path (lost events, retries, stuck rows, owed replies) and its silent-job alert
     * reads 10 minutes without a tick as a stopped job: a cron Quartz cannot read or that never fires stops the boot
     * (it used to fail only when the route started); one that waits longer than 5 minutes anywhere in the week is any Quartz cron the
     * contract's key takes (a test that wants the job rare): it starts, said in a warning, and is refused in the prod
     * profile (HardeningTest).
     */
    @Test
    void aRedeliveryCronQuartzCannotReadStopsTheBootAndASparseOneIsDescribed() {
        refused("adapter.inbox.redeliver-cron=every minute", "is not a Quartz cron");
        // Quartz refuses to schedule a trigger that never fires: refused at binding, not when the job's route starts
        refused("adapter.inbox.redeliver-cron=0 0 0 1 1 ? 2000", "never fires");
        for (String cron : List.of("0 */15 * * * ?", "0 * 8-18 * * ?", "0 * * ? * MON-FRI", "0 0 * * * ?")) {
            runner.withPropertyValues("adapter.inbox.redeliver-cron=" + cron).run(context -> {
                assertThat(context).as(cron).hasNotFailed();
                assertThat(context.getBean(com.hospital.surveyinbox.config.AdapterProperties.class).getInbox().redeliverCronGap())
                        .as(cron).contains("must fire at least every 5 minutes");
            });
        }
        for (String cron : List.of("0 */5 * * * ?", "0/30 * * * * ?", "0 * * * * ?")) {
            runner.withPropertyValues("adapter.inbox.redeliver-cron=" + cron).run(context -> {
                assertThat(context).as(cron).hasNotFailed();
                assertThat(context.getBean(com.hospital.surveyinbox.config.AdapterProperties.class).getInbox().redeliverCronGap()).isNull();
            });
        }
    }

    /**
     * The routes append paths to a base URL: one with a query, a fragment or no scheme stops the boot (a trailing slash
     * is taken off before the binding: BaseUrlSlashesTest; this runner binds without it).
     */
    @Test
    void aBaseUrlTheRoutesCannotExtendStopsTheBootNamingTheKey() {
        refused("adapter.legacy.base-url=http://legacy/x#top", "legacy.baseUrl");
        refused("adapter.account.base-url=account:8080", "account.baseUrl");
        refused("adapter.survey.base-url=http://survey/api?x=1", "survey.baseUrl");
        runner.withPropertyValues("adapter.legacy.base-url=https://gw.hospital.local:8443/legacy/v1")
                .run(context -> assertThat(context).hasNotFailed());
    }

    /**
     * A switch the routes read as written must be written true or false: the rollback toggle set to "off" (Spring
     * binds it as false) left receptions on the inbox path, silently.
     */
    @Test
    void aSwitchTheRoutesReadAsWrittenMustBeTrueOrFalse() {
        ApplicationContextRunner switches = new ApplicationContextRunner().withBean(RawBooleanSettings.class);
        for (String key : RawBooleanSettings.KEYS) {
            for (String value : List.of("off", "no", "0", "yes")) {
                switches.withPropertyValues(key + "=" + value).run(context -> {
                    assertThat(context).as(key + "=" + value).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().hasMessageContaining(key);
                });
            }
            for (String value : List.of("true", "false", "FALSE", "True")) {
                switches.withPropertyValues(key + "=" + value).run(context -> assertThat(context).hasNotFailed());
            }
        }
        switches.run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void aBareNumberIsInTheSettingsOwnUnit() {
        runner.withPropertyValues("adapter.http.response-timeout=30", "adapter.inbox.lost-event-after=120",
                "adapter.retention.dead=90", "adapter.retention.keep-finished=120", "adapter.http.connect-timeout=500ms")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    AdapterProperties properties = context.getBean(AdapterProperties.class);
                    assertThat(properties.getHttp().getResponseTimeout()).isEqualTo(Duration.ofSeconds(30));
                    assertThat(properties.getHttp().getConnectTimeout()).isEqualTo(Duration.ofMillis(500));
                    assertThat(properties.getInbox().getLostEventAfter()).isEqualTo(Duration.ofMinutes(2));
                    assertThat(properties.getRetention().getDead()).isEqualTo(Duration.ofDays(90));
                    assertThat(properties.getRetention().getKeepFinished()).isEqualTo(Duration.ofDays(120));
                });
    }

    @Test
    void aZoneQuartzWouldReadAsGmtIsRefused() {
        refused("adapter.legacy.zone=+09:00", "adapter.legacy.zone (+09:00) must be a region");
        runner.withPropertyValues("adapter.legacy.zone=GMT+09:00").run(context -> assertThat(context).hasNotFailed());
        runner.withPropertyValues("adapter.legacy.zone=Z").run(context -> assertThat(context).hasNotFailed()); // GMT to Quartz: the same
        runner.run(context -> assertThat(context.getBean(AdapterProperties.class).getLegacy().getZone().getId()).isEqualTo("Asia/Seoul"));
    }
}
