package com.hospital.surveyinbox.config;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import org.hibernate.validator.constraints.time.DurationMax;
import org.hibernate.validator.constraints.time.DurationMin;
import java.time.Duration;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.convert.DurationUnit;
import org.springframework.validation.annotation.Validated;

/**
 * Every setting of the service under one {@code adapter.*} tree, bound and validated at startup so a
 * bad value or a missing secret fails the boot instead of surfacing at the first message (a misspelt key does
 * not: Spring ignores keys it does not know, and ADAPTER_ROUTES_DIR, read by the route pattern, is one of them). Constructor-bound
 * and immutable: what the service read at start is what it runs with (a change is a restart, as the
 * rollback toggle's procedure says); defaults sit on the constructor parameters.
 * <p>Durations are ISO-8601 ({@code PT30S}) or a number with a unit ({@code 30s}); a bare number is in the unit
 * the setting is thought in (seconds, days for retention), never milliseconds: {@code ADAPTER_HTTP_RESPONSE_TIMEOUT=30}
 * is 30 s. Each that has a floor below which it cannot work says so (a timeout of 0 is no timeout at all to the HTTP client, a
 * retention of minutes removes every closed payload at the next run): a lower value stops the boot.
 */
@Validated
@ConfigurationProperties("adapter")
public class AdapterProperties {

    @Valid private final Inbox inbox;
    @Valid private final Kafka kafka;
    @Valid private final Legacy legacy;
    @Valid private final Downstream account;
    @Valid private final Downstream survey;
    @Valid private final Http http;
    @Valid private final Cache cache;
    @Valid private final Reception reception;
    @Valid private final Security security;
    @Valid private final Circuit circuit;
    @Valid private final Crypto crypto;
    @Valid private final Retention retention;

    /** Schema migrations. */
    @Valid private final Migration migration;

    /** The service's own log lines. */
    @Valid private final Logging logging;

    /** Traces (the sampling rate itself is Boot's management.tracing.sampling.probability). */
    @Valid private final Tracing tracing;

    public AdapterProperties(@DefaultValue Inbox inbox,
            @DefaultValue Kafka kafka,
            @DefaultValue Legacy legacy,
            @DefaultValue Downstream account,
            @DefaultValue Downstream survey,
            @DefaultValue Http http,
            @DefaultValue Cache cache,
            @DefaultValue Reception reception,
            @DefaultValue Security security,
            @DefaultValue Circuit circuit,
            @DefaultValue Crypto crypto,
            @DefaultValue Retention retention,
            @DefaultValue Migration migration,
            @DefaultValue Logging logging,
            @DefaultValue Tracing tracing) {
        this.inbox = inbox;
        this.kafka = kafka;
        this.legacy = legacy;
        this.account = account;
        this.survey = survey;
        this.http = http;
        this.cache = cache;
        this.reception = reception;
        this.security = security;
        this.circuit = circuit;
        this.crypto = crypto;
        this.retention = retention;
        this.migration = migration;
        this.logging = logging;
        this.tracing = tracing;
    }

    public Inbox getInbox() { return inbox; }
    public Kafka getKafka() { return kafka; }
    public Legacy getLegacy() { return legacy; }
    public Downstream getAccount() { return account; }
    public Downstream getSurvey() { return survey; }
    public Http getHttp() { return http; }
    public Cache getCache() { return cache; }
    public Reception getReception() { return reception; }
    public Security getSecurity() { return security; }
    public Circuit getCircuit() { return circuit; }
    public Crypto getCrypto() { return crypto; }
    public Retention getRetention() { return retention; }
    public Migration getMigration() { return migration; }
    public Logging getLogging() { return logging; }
    public Tracing getTracing() { return tracing; }

    /** Traces (config/TraceSampling). */
    public static class Tracing {
        /**
         * Requests per second (per instance) whose caller's traceparent asks for its trace to be recorded that are
         * recorded on that word; beyond it they are sampled as a trace started here is. Anyone who reaches the port
         * can send the flag, before any authentication: unbounded, every request made spans for the collector.
         */
        @Min(0) private final int senderSampledPerSecond;

        public Tracing(@DefaultValue("10") int senderSampledPerSecond) {
            this.senderSampledPerSecond = senderSampledPerSecond;
        }

        public int getSenderSampledPerSecond() { return senderSampledPerSecond; }
    }

    /** The service's own log lines (config/RepeatedLogLines). */
    public static class Logging {
        /**
         * WARN and ERROR lines of one kind (logger, level, message with its numbers masked) written per
         * repeat-window; the others are dropped, counted, and said in one line when the window ends. 0 writes every
         * line.
         */
        @Min(0) private final int repeatLimit;
        /** The window of repeat-limit. */
        @NotNull @DurationMin(seconds = 1) private final Duration repeatWindow;

        public Logging(@DefaultValue("20") int repeatLimit,
                @DefaultValue("PT1M") @DurationUnit(ChronoUnit.SECONDS) Duration repeatWindow) {
            this.repeatLimit = repeatLimit;
            this.repeatWindow = repeatWindow;
        }

        public int getRepeatLimit() { return repeatLimit; }
        public Duration getRepeatWindow() { return repeatWindow; }
    }

    /** Schema migrations (Flyway, on a connection of its own: config/FlywayConnection). */
    public static class Migration {
        /**
         * How long a migration's statement may wait for a lock before it fails (the next start retries): a DDL
         * waiting for its lock would queue every insert of the table behind it.
         */
        @NotNull @DurationMin(millis = 100) @DurationMax(minutes = 1) private final Duration lockTimeout;
        /**
         * How long a start waits for a database it cannot reach (down, starting up, no connection left) before it
         * fails; within the startup probe's budget (ManifestConsistencyTest), 11 minutes at most (the probe's 840 s
         * less a start's own time).
         */
        @NotNull @DurationMin(seconds = 0) @DurationMax(minutes = 11) private final Duration databaseWait;

        public Migration(@DefaultValue("PT5S") @DurationUnit(ChronoUnit.SECONDS) Duration lockTimeout,
                         @DefaultValue("PT10M") @DurationUnit(ChronoUnit.SECONDS) Duration databaseWait) {
            this.lockTimeout = lockTimeout;
            this.databaseWait = databaseWait;
        }

        public Duration getLockTimeout() { return lockTimeout; }
        public Duration getDatabaseWait() { return databaseWait; }
    }

    public static class Inbox {
        /** false = rollback toggle: reception registers synchronously while stored rows keep draining. */
        private final boolean enabled;
        /** The attempt that reaches this count turns the row DEAD. */
        @Min(1) private final int maxAttempts;
        /** A FAILED row is republished once its last attempt is older than this. */
        @NotNull @DurationMin(millis = 0) @DurationMax(hours = 6) private final Duration retryDelay;
        /** A RECEIVED row older than this is presumed to have lost its event and is republished. */
        @NotNull @DurationMin(seconds = 1) @DurationMax(hours = 6) private final Duration lostEventAfter;
        /** A PROCESSING row untouched for this long is presumed abandoned, reset to RECEIVED and republished. */
        @NotNull @DurationMin(seconds = 1) @DurationMax(days = 1) private final Duration stuckProcessingAfter;
        /**
         * Quartz cron of the clustered redelivery job (seconds field first); it must fire at least every 5 minutes
         * (SurveyInboxRedeliveryJobSilent reads 10 minutes without a tick as a stopped job).
         */
        @NotBlank private final String redeliverCron;
        /** {@link #tooLongGap} of the cron (11,520 next-fire computations), taken once at binding. */
        private final String redeliverCronGap;
        /** Most rows of each stalled kind republished per redelivery tick, oldest first. */
        @Min(1) @jakarta.validation.constraints.Max(5000) private final int redeliverBatchSize;
        /** false keeps this instance out of the clustered jobs (its scheduler does not start). */
        private final boolean redeliverEnabled;
        /** Days of redelivery_run history kept (operators' view of the job's ticks). */
        @Min(1) private final int redeliverHistoryDays;
        /** Longest one redelivery tick spends publishing; what is left waits for a later tick. */
        @NotNull @DurationMax(minutes = 10) private final Duration redeliverPublishDeadline;
        /** Most rows one operator bulk requeue takes (POST /ops/inbox/requeue). */
        @Min(1) private final int bulkRequeueMax;
        /** Events per second a bulk requeue republishes (a downstream that just recovered is not flooded); 1..1000. */
        @Min(1) @jakarta.validation.constraints.Max(1000) private final int bulkRequeueRatePerSecond;
        /**
         * Longest one bulk requeue spends requeueing rows: past it no further row is started, and the answer counts
         * the rest as {@code remaining} (a database answering in seconds would otherwise hold the operator's call for
         * minutes, long after the client gave up). At most 100 s: below the web server's graceful stop (120 s), which
         * would cut the call while the requeue went on (a site's own route to /ops may wait less: lower it to that).
         */
        @NotNull @DurationMax(seconds = 100) private final Duration bulkRequeueWithin;
        /**
         * Longest wait between two tries of a reply the legacy system keeps refusing: the wait after the n-th
         * failed try is retry-delay x 2^(n-1), at most this (a reply is never given up: the contract retries it).
         */
        @NotNull @DurationMax(days = 1) private final Duration replyMaxRetryDelay;
        /**
         * Synchronous registrations (rollback toggle) one instance runs at once; more are answered 503 at once. Each
         * holds a request thread and one downstream connection at a time, beside the workers' (the pool keeps max(50, workers + this + 2) per downstream host).
         */
        @Min(1) private final int synchronousConcurrency;

        public Inbox(@DefaultValue("true") boolean enabled,
                @DefaultValue("5") int maxAttempts,
                @DefaultValue("PT1M") @DurationUnit(ChronoUnit.SECONDS) Duration retryDelay,
                @DefaultValue("PT2M") @DurationUnit(ChronoUnit.SECONDS) Duration lostEventAfter,
                @DefaultValue("PT15M") @DurationUnit(ChronoUnit.SECONDS) Duration stuckProcessingAfter,
                @DefaultValue("0 * * * * ?") String redeliverCron,
                @DefaultValue("200") int redeliverBatchSize,
                @DefaultValue("true") boolean redeliverEnabled,
                @DefaultValue("7") int redeliverHistoryDays,
                @DefaultValue("PT30S") @DurationUnit(ChronoUnit.SECONDS) Duration redeliverPublishDeadline,
                @DefaultValue("500") int bulkRequeueMax,
                @DefaultValue("10") int bulkRequeueRatePerSecond,
                @DefaultValue("PT1H") @DurationUnit(ChronoUnit.SECONDS) Duration replyMaxRetryDelay,
                @DefaultValue("24") int synchronousConcurrency,
                @DefaultValue("PT20S") @DurationUnit(ChronoUnit.SECONDS) Duration bulkRequeueWithin) {
            this.enabled = enabled;
            this.maxAttempts = maxAttempts;
            this.retryDelay = retryDelay;
            this.lostEventAfter = lostEventAfter;
            this.stuckProcessingAfter = stuckProcessingAfter;
            this.redeliverCron = redeliverCron;
            this.redeliverBatchSize = redeliverBatchSize;
            this.redeliverEnabled = redeliverEnabled;
            this.redeliverHistoryDays = redeliverHistoryDays;
            if (redeliverPublishDeadline != null && (redeliverPublishDeadline.isZero() || redeliverPublishDeadline.isNegative())) {
                // a tick would then neither send a reply nor republish anything, saying so only in a warning
                throw new IllegalArgumentException("adapter.inbox.redeliver-publish-deadline (" + redeliverPublishDeadline
                        + ") must be positive");
            }
            String gap = redeliverCron == null || redeliverCron.isBlank() ? null : tooLongGap(redeliverCron);
            this.redeliverCronGap = gap;
            if (gap != null) {
                // any cron Quartz reads is the operator's to choose (a test that wants the job rare, a site's own
                // rhythm): said here, refused only in the prod profile (ProductionSafetyCheck)
                org.slf4j.LoggerFactory.getLogger(AdapterProperties.class).warn("{}: lost events, retries, stuck rows "
                        + "and owed replies wait that long, and the silent-job alert pages", gap);
            }
            if (replyMaxRetryDelay != null && retryDelay != null && replyMaxRetryDelay.compareTo(retryDelay) < 0) {
                throw new IllegalArgumentException("adapter.inbox.reply-max-retry-delay (" + replyMaxRetryDelay
                        + ") must be at least adapter.inbox.retry-delay (" + retryDelay + ")");
            }
            this.redeliverPublishDeadline = redeliverPublishDeadline;
            this.bulkRequeueMax = bulkRequeueMax;
            this.bulkRequeueRatePerSecond = bulkRequeueRatePerSecond;
            this.replyMaxRetryDelay = replyMaxRetryDelay;
            this.synchronousConcurrency = synchronousConcurrency;
            if (bulkRequeueWithin != null && (bulkRequeueWithin.isZero() || bulkRequeueWithin.isNegative())) {
                throw new IllegalArgumentException("adapter.inbox.bulk-requeue-within (" + bulkRequeueWithin + ") must be positive");
            }
            this.bulkRequeueWithin = bulkRequeueWithin;
        }

        /** Longest wait between two ticks of the redelivery job (sampled over 8 days, so weekday and hour fields count). */
        static final Duration REDELIVER_LONGEST_GAP = Duration.ofMinutes(5);

        /**
         * Refuses a redelivery cron Quartz cannot read or that never fires again; describes one that leaves more than
         * {@link #REDELIVER_LONGEST_GAP} between ticks anywhere in the next 8 days (within a minute), or null: lost
         * events, retries, stuck rows and owed replies wait for a tick, and the silent-job alert would page for a job
         * that runs as configured.
         */
        static String tooLongGap(String cron) {
            org.quartz.CronExpression expression;
            try {
                expression = new org.quartz.CronExpression(cron);
            } catch (java.text.ParseException e) {
                throw new IllegalArgumentException("adapter.inbox.redeliver-cron (" + cron + ") is not a Quartz cron: "
                        + e.getMessage());
            }
            long start = System.currentTimeMillis();
            for (long at = start; at < start + Duration.ofDays(8).toMillis(); at += 60_000) {
                java.util.Date next = expression.getNextValidTimeAfter(new java.util.Date(at));
                if (next == null) {
                    // Quartz refuses to schedule a trigger that never fires: the job's route would fail to start, later
                    throw new IllegalArgumentException("adapter.inbox.redeliver-cron (" + cron + ") never fires after "
                            + java.time.Instant.ofEpochMilli(at) + ": Quartz would refuse to schedule the redelivery job");
                }
                if (next.getTime() - at > REDELIVER_LONGEST_GAP.toMillis()) {
                    return "adapter.inbox.redeliver-cron (" + cron + ") must fire at least every "
                            + REDELIVER_LONGEST_GAP.toMinutes() + " minutes; it waits "
                            + Duration.ofMillis(next.getTime() - at).toMinutes() + " minutes after "
                            + java.time.Instant.ofEpochMilli(at);
                }
            }
            return null;
        }

        /** {@link #tooLongGap} of this cron, read once at binding (null when it fires often enough, or is unset). */
        public String redeliverCronGap() {
            return redeliverCronGap;
        }

        public boolean isEnabled() { return enabled; }
        public int getMaxAttempts() { return maxAttempts; }
        public Duration getRetryDelay() { return retryDelay; }
        public Duration getLostEventAfter() { return lostEventAfter; }
        public Duration getStuckProcessingAfter() { return stuckProcessingAfter; }
        public String getRedeliverCron() { return redeliverCron; }
        public int getRedeliverBatchSize() { return redeliverBatchSize; }
        public boolean isRedeliverEnabled() { return redeliverEnabled; }
        public int getRedeliverHistoryDays() { return redeliverHistoryDays; }
        public Duration getRedeliverPublishDeadline() { return redeliverPublishDeadline; }
        public int getBulkRequeueMax() { return bulkRequeueMax; }
        public int getBulkRequeueRatePerSecond() { return bulkRequeueRatePerSecond; }
        public Duration getBulkRequeueWithin() { return bulkRequeueWithin; }
        public Duration getReplyMaxRetryDelay() { return replyMaxRetryDelay; }
        public int getSynchronousConcurrency() { return synchronousConcurrency; }
    }

    public static class Kafka {
        /**
         * Topic of the "stored in the inbox" events; key = srvyDrawupNo. Kafka's legal names only: the broker refuses
         * any other, and the service would go on storing receptions whose events it can never publish.
         */
        @NotBlank @jakarta.validation.constraints.Pattern(regexp = "(?!\\.{1,2}$)[a-zA-Z0-9._-]{1,249}",
                message = "must be a legal Kafka topic name: 1 to 249 of a-z A-Z 0-9 . _ -") private final String topic;
        /** Consumer group of the processing route. */
        @NotBlank private final String groupId;
        /** Partitions used when the service creates the topic itself; must be >= consumers. */
        @Min(1) private final int partitions;
        /** Replication factor used when the service creates the topic itself. */
        @Min(1) private final short replicationFactor;
        /** Concurrent Kafka consumers (threads) of the processing route in this instance. */
        @Min(1) private final int consumers;
        /** Records fetched per poll; small because each record makes several downstream calls. */
        @Min(1) private final int maxPollRecords;
        /** Milliseconds a consumer's poll waits for records; also how long a stop (shutdown, rebalance) waits for a poll to return. */
        @Min(100) private final int pollTimeoutMs;
        /**
         * Milliseconds a consumer may stay away from poll() before the broker throws it out of the group
         * (Kafka's max.poll.interval.ms). A consumer waits for a free worker at most this divided by
         * 2 x max-poll-records per record, so even with every worker held by slow downstreams it is back
         * in time (a record it could not hand over is left to the redelivery job).
         */
        @Min(1000) private final int maxPollIntervalMs;
        /** Threads that publish reception events after commit (the wire tap's pool). */
        @Min(1) private final int publishThreads;
        /** Events waiting for a publish thread; beyond it an event is dropped (its row stays RECEIVED and the redelivery job republishes it), so a reception never waits on Kafka. */
        @Min(1) private final int publishQueue;
        /**
         * Rows registered at once by this instance: the workers every consumer hands its records to. A consumer
         * waits for a free worker, so the busiest partitions no longer bound a drain (any worker takes any record).
         */
        @Min(1) private final int workers;
        /**
         * Milliseconds: how often each instance looks for threads of its processing consumer that ended for good (an authentication
         * or authorization error from the broker) and restarts the route (backing off while they keep ending).
         */
        @Min(1000) @jakarta.validation.constraints.Max(300000) private final int watchPeriodMs;
        /**
         * How long the topic keeps events (retention.ms, set when the service creates the topic; a topic that keeps
         * them shorter is said at every start): a database restore replays the topic from before its restore point, so
         * at least the database's point-in-time-recovery window.
         */
        @NotNull @DurationMin(hours = 1) private final Duration retention;

        public Kafka(@DefaultValue("survey-send-info-received") String topic,
                @DefaultValue("survey-inbox-adapter") String groupId,
                @DefaultValue("64") int partitions,
                @DefaultValue("1") short replicationFactor,
                @DefaultValue("16") int consumers,
                @DefaultValue("10") int maxPollRecords,
                @DefaultValue("1000") int pollTimeoutMs,
                @DefaultValue("300000") int maxPollIntervalMs,
                @DefaultValue("4") int publishThreads,
                @DefaultValue("5000") int publishQueue,
                @DefaultValue("16") int workers,
                @DefaultValue("10000") int watchPeriodMs,
                @DefaultValue("P14D") @DurationUnit(ChronoUnit.DAYS) Duration retention) {
            this.topic = topic;
            this.groupId = groupId;
            this.partitions = partitions;
            this.replicationFactor = replicationFactor;
            this.consumers = consumers;
            this.maxPollRecords = maxPollRecords;
            this.pollTimeoutMs = pollTimeoutMs;
            this.maxPollIntervalMs = maxPollIntervalMs;
            this.publishThreads = publishThreads;
            this.publishQueue = publishQueue;
            this.workers = workers;
            this.watchPeriodMs = watchPeriodMs;
            this.retention = retention;
        }

        public Duration getRetention() { return retention; }

        public int getWatchPeriodMs() { return watchPeriodMs; }

        public String getTopic() { return topic; }
        public String getGroupId() { return groupId; }
        public int getPartitions() { return partitions; }
        public short getReplicationFactor() { return replicationFactor; }
        public int getConsumers() { return consumers; }
        public int getMaxPollRecords() { return maxPollRecords; }
        public int getPollTimeoutMs() { return pollTimeoutMs; }
        public int getMaxPollIntervalMs() { return maxPollIntervalMs; }

        /** Longest a consumer waits to hand one record to a worker (see {@link #maxPollIntervalMs}). */
        public java.time.Duration getHandOffWait() {
            return java.time.Duration.ofMillis(Math.max(100, maxPollIntervalMs / (2L * maxPollRecords)));
        }
        public int getPublishThreads() { return publishThreads; }
        public int getPublishQueue() { return publishQueue; }
        public int getWorkers() { return workers; }
    }

    public static class Http {
        /** Timeout to open a TCP connection to a downstream. */
        @NotNull @DurationMin(millis = 100) @DurationMax(minutes = 1) private final Duration connectTimeout;
        /** Timeout waiting for a downstream response (the slow consent lookup takes ~1 s). */
        @NotNull @DurationMin(millis = 100) @DurationMax(minutes = 5) private final Duration responseTimeout;
        /**
         * Largest downstream answer read (bytes; a larger one fails the call as a system error): every answer is
         * read into memory, and one of hundreds of megabytes would end the pod (ExitOnOutOfMemoryError).
         */
        @Min(1024) private final int maxAnswerBytes;
        /**
         * Longest line of an answer's head (bytes: its status line, each header, each chunk size line; a longer one
         * fails the call as a system error): the client reads a head without any bound of its own.
         */
        @Min(1024) private final int maxHeaderBytes;
        /** Most headers an answer may have (count; more fail the call as a system error). */
        @Min(16) private final int maxHeaders;
        /**
         * Name of a Spring Boot SSL bundle ({@code spring.ssl.bundle.pem.<name>} or {@code .jks.<name>}) whose trust
         * (a hospital's own CA), key (a client certificate, when the downstreams ask for one) and protocols every
         * {@code https} downstream call uses. Unset: the JVM's default trust, no client certificate. The host name is
         * always checked against the certificate.
         */
        private final String sslBundle;
        /**
         * Whether prod accepts an {@code http://} base URL: patients' names and phone numbers travel in the calls, so
         * prod refuses plain HTTP unless something else encrypts the traffic (a service mesh's mutual TLS between pods).
         */
        private final boolean plainHttpAllowed;

        public Http(@DefaultValue("PT2S") @DurationUnit(ChronoUnit.SECONDS) Duration connectTimeout,
                @DefaultValue("PT5S") @DurationUnit(ChronoUnit.SECONDS) Duration responseTimeout,
                @DefaultValue("1048576") int maxAnswerBytes,
                @DefaultValue("16384") int maxHeaderBytes,
                @DefaultValue("100") int maxHeaders,
                String sslBundle,
                @DefaultValue("false") boolean plainHttpAllowed) {
            this.connectTimeout = connectTimeout;
            this.responseTimeout = responseTimeout;
            this.maxAnswerBytes = maxAnswerBytes;
            this.maxHeaderBytes = maxHeaderBytes;
            this.maxHeaders = maxHeaders;
            this.sslBundle = sslBundle == null || sslBundle.isBlank() ? null : sslBundle.strip();
            this.plainHttpAllowed = plainHttpAllowed;
        }

        /** The SSL bundle of the https calls, or null for the JVM's default trust. */
        public String getSslBundle() { return sslBundle; }
        public boolean isPlainHttpAllowed() { return plainHttpAllowed; }

        public Duration getConnectTimeout() { return connectTimeout; }
        public Duration getResponseTimeout() { return responseTimeout; }
        public int getMaxAnswerBytes() { return maxAnswerBytes; }
        public int getMaxHeaderBytes() { return maxHeaderBytes; }
        public int getMaxHeaders() { return maxHeaders; }

        /**
         * The longest one call may take in all, its answer read to the end: a pooled connection's lease and the
         * connect (connect timeout each) and the response timeout. Each of those alone is a per-read timeout, and
         * an answer dripped a byte at a time within it never timed out. The shutdown model's per-call bound.
         */
        public Duration getCallDeadline() { return connectTimeout.multipliedBy(2).plus(responseTimeout); }
    }

    public static class Cache {
        /** TTL of a cached consent list (empty lists included; a 404 is never cached). */
        @NotNull @DurationMin(seconds = 1) @DurationMax(days = 1) private final Duration consentTtl;
        /** Redis key prefix; the srvyNo is appended. */
        @NotBlank private final String keyPrefix;
        /**
         * After a failed Redis command, how long the cache is left out (every lookup a miss, nothing written) before
         * one command tries Redis again: a Redis that is down or slow costs one command's timeout per pause, not
         * three per message.
         */
        @NotNull @DurationMin(millis = 100) @DurationMax(minutes = 10) private final Duration redisPause;

        public Cache(@DefaultValue("PT5M") @DurationUnit(ChronoUnit.SECONDS) Duration consentTtl,
                @DefaultValue("survey-inbox-adapter:consents:") String keyPrefix,
                @DefaultValue("PT5S") @DurationUnit(ChronoUnit.SECONDS) Duration redisPause) {
            this.consentTtl = consentTtl;
            this.keyPrefix = keyPrefix;
            this.redisPause = redisPause;
        }

        public Duration getConsentTtl() { return consentTtl; }
        public String getKeyPrefix() { return keyPrefix; }
        public Duration getRedisPause() { return redisPause; }
    }

    public static class Reception {
        /** Largest accepted request body in bytes; larger bodies get 413, counted on the stream. */
        @Min(1) private final int maxBodyBytes;
        /** Longest a reception waits for its row to be committed; then it answers 503 (a database that stops answering without closing connections must not hold the sender's transaction open). */
        @NotNull @DurationMin(millis = 100) @DurationMax(minutes = 1) private final Duration storeTimeout;
        /** Per-sender rate limit. */
        @Valid private final RateLimit rateLimit;
        /** Group insert of concurrent receptions. */
        @Valid private final GroupInsert groupInsert;
        /**
         * Connections (count) reserved for storing receptions, in a pool of their own: workers stuck in slow
         * SQL, Quartz and the operator reads can never take the connection a reception needs to commit.
         */
        @Min(1) private final int poolSize;
        /**
         * Receptions (count) a pod handles at once, below {@code server.tomcat.threads.max}; one more is answered 503
         * "please retry" at once ({@link com.hospital.surveyinbox.reception.ReceptionAdmissionFilter}).
         */
        @Min(1) private final int maxInFlight;

        public Reception(@DefaultValue("65536") int maxBodyBytes,
                @DefaultValue("PT5S") @DurationUnit(ChronoUnit.SECONDS) Duration storeTimeout,
                @DefaultValue RateLimit rateLimit,
                @DefaultValue GroupInsert groupInsert,
                @DefaultValue("4") int poolSize,
                @DefaultValue("150") int maxInFlight) {
            this.maxBodyBytes = maxBodyBytes;
            this.storeTimeout = storeTimeout;
            this.rateLimit = rateLimit;
            // a group's writers hold a connection each while they commit; a reception alone, or the check of a commit
            // whose answer was lost, needs one more: with fewer, that check waited behind a writer past its time and
            // answered 503 for a row that may be stored (a retry without an Idempotency-Key stored it twice)
            if (groupInsert != null && groupInsert.isEnabled() && poolSize < groupInsert.getWriters() + 1) {
                throw new IllegalArgumentException("adapter.reception.pool-size (" + poolSize + ") must be at least "
                        + "adapter.reception.group-insert.writers + 1 (" + (groupInsert.getWriters() + 1) + ")");
            }
            this.groupInsert = groupInsert;
            this.poolSize = poolSize;
            this.maxInFlight = maxInFlight;
        }

        public int getPoolSize() { return poolSize; }
        public int getMaxInFlight() { return maxInFlight; }

        public int getMaxBodyBytes() { return maxBodyBytes; }
        public Duration getStoreTimeout() { return storeTimeout; }
        public RateLimit getRateLimit() { return rateLimit; }
        public GroupInsert getGroupInsert() { return groupInsert; }
    }

    public static class Downstream {
        /**
         * Base URL, e.g. https://account-service or https://gw/legacy (prod refuses http unless
         * adapter.http.plain-http-allowed): http(s), a host, an optional port and path, no query or fragment (the
         * routes append "/patients/…"). A trailing slash is taken off before the binding
         * ({@link com.hospital.surveyinbox.config.BaseUrlSlashes}); one left here would make "//patients".
         */
        @NotBlank @jakarta.validation.constraints.Pattern(regexp = "https?://[^/?#\\s]+(/[^?#\\s]*[^/?#\\s])?",
                message = "must be http(s)://host[:port][/path], without a trailing '/', query or fragment")
        private final String baseUrl;

        public Downstream(String baseUrl) {
            this.baseUrl = baseUrl;
        }

        public String getBaseUrl() { return baseUrl; }
    }

    public static class Legacy extends Downstream {
        /** Time zone of the legacy sendDt field (yyyyMMddHHmmss, local time). */
        @NotNull private final ZoneId zone;

        public Legacy(String baseUrl, @DefaultValue("Asia/Seoul") ZoneId zone) {
            super(baseUrl);
            // the retention job's cron runs in this zone, and Quartz reads it with java.util.TimeZone, which takes an
            // id it does not know (+09:00, UTC+09:00) for GMT: the nightly run would move to the hospital's daytime
            if (zone != null && !java.util.TimeZone.getTimeZone(zone.getId()).toZoneId().getRules().equals(zone.getRules())) {
                throw new IllegalArgumentException("adapter.legacy.zone (" + zone.getId() + ") must be a region such as "
                        + "Asia/Seoul, or GMT+09:00: the retention job's schedule would read it as GMT");
            }
            this.zone = zone;
        }

        public ZoneId getZone() { return zone; }
    }

    /** Receptions arriving together are committed together (one transaction, one commit). */
    public static class GroupInsert {
        /** false: one autocommit INSERT per reception. */
        private final boolean enabled;
        /** Groups committed concurrently (lanes, each one connection while it commits); a subject always uses the same lane. */
        @Min(1) private final int writers;
        /** Most rows in one group. */
        @Min(2) private final int maxRows;

        public GroupInsert(@DefaultValue("true") boolean enabled,
                @DefaultValue("2") int writers,
                @DefaultValue("64") int maxRows) {
            this.enabled = enabled;
            this.writers = writers;
            this.maxRows = maxRows;
        }

        public boolean isEnabled() { return enabled; }
        public int getWriters() { return writers; }
        public int getMaxRows() { return maxRows; }
    }

    /** Per-sender token bucket on the reception endpoint (503 "please retry" beyond it). */
    public static class RateLimit {
        /** false accepts any rate. */
        private final boolean enabled;
        /** Sustained requests per second per sender (per instance). */
        @Min(1) private final int perSecond;
        /** Requests a sender may send at once. */
        @Min(1) private final int burst;

        public RateLimit(@DefaultValue("true") boolean enabled,
                @DefaultValue("500") int perSecond,
                @DefaultValue("1000") int burst) {
            this.enabled = enabled;
            this.perSecond = perSecond;
            this.burst = burst;
        }

        public boolean isEnabled() { return enabled; }
        public int getPerSecond() { return perSecond; }
        public int getBurst() { return burst; }
    }

    /**
     * Outage awareness: after {@code failureThreshold} consecutive system errors from one downstream, or as many
     * different requests of one of its calls failing, its circuit opens; while open, rows that need it are deferred
     * without being charged an attempt (processing/DownstreamCircuits).
     */
    public static class Circuit {
        /** false charges every system error as an attempt (the plain retry ledger). */
        private final boolean enabled;
        /**
         * Consecutive system errors (count) from one downstream that open its circuit; as many different requests of
         * one call failing since that call last answered open it too.
         */
        @Min(1) private final int failureThreshold;
        /**
         * How long an open circuit defers rows before letting trial calls through; a call's failed request is
         * remembered for ten times this.
         */
        @NotNull @DurationMin(millis = 100) @DurationMax(hours = 1) private final Duration openDuration;

        public Circuit(@DefaultValue("true") boolean enabled,
                @DefaultValue("5") int failureThreshold,
                @DefaultValue("PT30S") @DurationUnit(ChronoUnit.SECONDS) Duration openDuration) {
            this.enabled = enabled;
            this.failureThreshold = failureThreshold;
            this.openDuration = openDuration;
        }

        public boolean isEnabled() { return enabled; }
        public int getFailureThreshold() { return failureThreshold; }
        public Duration getOpenDuration() { return openDuration; }
    }

    /** Encryption at rest of the stored payload (AES-256-GCM, key id stored per row). */
    public static class Crypto {
        /** Encrypt new payloads (on by default in the prod profile). Rows keep whatever they were stored with. */
        private final boolean enabled;
        /** Id of the key that encrypts new payloads; must be one of {@code keys}. */
        private final String activeKey;
        /** Key id -> base64 of 32 random bytes. From a Secret; old ids stay until no row names them. */
        private final Map<String, String> keys;
        /**
         * How long a row sealed with a key the claiming instance lacks waits uncharged (a rotation rolling out, a
         * Secret being fixed); past it, counted from the row's arrival (or its requeue from DEAD), its attempts are charged as a system error, so
         * a key that is gone for good ends in DEAD and a failure reply instead of a row held for ever.
         */
        @NotNull @DurationMin(hours = 1) @DurationMax(days = 30) private final Duration keyWait;

        public Crypto(@DefaultValue("false") boolean enabled,
                String activeKey,
                Map<String, String> keys,
                @DefaultValue("P1D") @DurationUnit(ChronoUnit.SECONDS) Duration keyWait) {
            this.enabled = enabled;
            this.activeKey = activeKey;
            this.keys = keys == null ? Map.of() : Map.copyOf(keys);
            this.keyWait = keyWait;
        }

        public boolean isEnabled() { return enabled; }
        public String getActiveKey() { return activeKey; }
        public Map<String, String> getKeys() { return keys; }
        public Duration getKeyWait() { return keyWait; }
    }

    /** Retention of the payload (patient data) of closed rows; metadata and history are kept. */
    public static class Retention {
        /** false keeps every payload (the retention route does not start). */
        private final boolean enabled;
        /** Payloads of COMPLETED rows are removed this long after the row closed. */
        @NotNull @DurationMin(days = 1) private final Duration completed;
        /** Payloads of DEAD rows are removed this long after the row died (kept longer for investigation). */
        @NotNull @DurationMin(days = 1) private final Duration dead;
        /** Quartz cron of the clustered retention job. */
        @NotBlank private final String cron;
        /** Rows redacted (and rows deleted) per statement; the job loops until nothing is due or max-batches. */
        @Min(1) @jakarta.validation.constraints.Max(5000) private final int batchSize;
        /**
         * Batches (count) each of the run's two statements (redact, delete) takes at most in one run; what is left
         * is the next run's. Bounds one night's work when keep-* is shortened on a table of many millions of rows
         * (a mass delete: vacuum of every index over and over, a burst of WAL, a pod that cannot stop until it ends).
         */
        @Min(1) private final int maxBatches;
        /**
         * DEAD rows and COMPLETED SUBMITs leave the table, with their attempts and audit, this long after they
         * finished (unless a reply is still owed); so long is their Idempotency-Key recognised. At least
         * {@code dead} and {@code completed}; unset: 90 days or the longer of those two.
         */
        @NotNull private final Duration keepFinished;
        /**
         * COMPLETED SENDs leave the table this long after they finished: a later SEND of the subject is a resend
         * while one exists (and their Idempotency-Key is recognised). At least {@code keepFinished}; unset: 400 days
         * or {@code keepFinished} if longer.
         */
        @NotNull private final Duration keepResendable;

        public Retention(@DefaultValue("true") boolean enabled,
                @DefaultValue("P30D") @DurationUnit(ChronoUnit.DAYS) Duration completed,
                @DefaultValue("P90D") @DurationUnit(ChronoUnit.DAYS) Duration dead,
                @DefaultValue("0 30 3 * * ?") String cron,
                @DefaultValue("1000") int batchSize,
                @DefaultValue("500") int maxBatches,
                @DurationUnit(ChronoUnit.DAYS) Duration keepFinished,
                @DurationUnit(ChronoUnit.DAYS) Duration keepResendable) {
            this.enabled = enabled;
            this.completed = completed;
            this.dead = dead;
            this.cron = cron;
            this.batchSize = batchSize;
            this.maxBatches = maxBatches;
            // unset: 90 and 400 days, or longer where dead / completed are (an upgrade with longer ones starts)
            Duration longestPayload = dead == null || completed == null ? Duration.ZERO
                    : (dead.compareTo(completed) >= 0 ? dead : completed);
            this.keepFinished = keepFinished != null ? keepFinished
                    : (longestPayload.compareTo(Duration.ofDays(90)) > 0 ? longestPayload : Duration.ofDays(90));
            this.keepResendable = keepResendable != null ? keepResendable
                    : (this.keepFinished.compareTo(Duration.ofDays(400)) > 0 ? this.keepFinished : Duration.ofDays(400));
            if (keepFinished != null && dead != null && completed != null
                    && (keepFinished.compareTo(dead) < 0 || keepFinished.compareTo(completed) < 0)) {
                throw new IllegalArgumentException("adapter.retention.keep-finished (" + keepFinished.toDays()
                        + " days) must be at least adapter.retention.dead (" + dead.toDays() + " days) and .completed ("
                        + completed.toDays() + " days): a row is kept while its payload is");
            }
            if (keepResendable != null && keepResendable.compareTo(this.keepFinished) < 0) {
                throw new IllegalArgumentException("adapter.retention.keep-resendable (" + keepResendable.toDays()
                        + " days) must be at least adapter.retention.keep-finished (" + this.keepFinished.toDays() + " days)");
            }
        }

        public boolean isEnabled() { return enabled; }
        public Duration getCompleted() { return completed; }
        public Duration getDead() { return dead; }
        public String getCron() { return cron; }
        public int getBatchSize() { return batchSize; }
        public int getMaxBatches() { return maxBatches; }
        public Duration getKeepFinished() { return keepFinished; }
        public Duration getKeepResendable() { return keepResendable; }
    }

    public static class Security {
        /** The legacy sender. */
        @Valid private final Credentials legacy;
        /** Operators. */
        @Valid private final Credentials ops;
        /**
         * Operators who only look (optional; unset: none): the console and every {@code GET} of the operator API, never
         * a requeue, a reply's retry or abandon. A viewer or a script polling the stats holds no write.
         */
        @Valid private final Credentials opsViewer;
        /** Limit on failed Basic authentications per client address. */
        @Valid private final AuthFailures authFailures;
        /**
         * Reverse proxies (CIDR, e.g. the ingress controller's pod range) whose {@code X-Forwarded-For} is
         * believed: the client address is the rightmost entry not in this list. Empty (the default): the
         * header is ignored and the client is the socket's peer.
         */
        @NotNull private final java.util.List<String> trustedProxies;
        /**
         * Operator API reads (GET, HEAD: count) a pod serves at once; one more is answered 503 with Retry-After at once.
         * Each holds a request thread and most a connection of the main pool: unbounded, a loop of reads took the
         * threads receptions need and the connections workers need. A console's refresh sends 4 at once.
         */
        @Min(1) private final int opsMaxInFlight;
        /**
         * Operator API writes (POSTs: requeues, bulk requeues and their counts, a reply's retry or abandon: count) a pod
         * serves at once, apart from the reads, so readers (a viewer's script) never leave an operator's requeue
         * without room.
         */
        @Min(1) private final int opsMaxWritesInFlight;

        public Security(@DefaultValue Credentials legacy,
                @DefaultValue Credentials ops,
                Credentials opsViewer,
                @DefaultValue AuthFailures authFailures,
                @DefaultValue java.util.List<String> trustedProxies,
                @DefaultValue("6") int opsMaxInFlight,
                @DefaultValue("2") int opsMaxWritesInFlight) {
            this.opsMaxInFlight = opsMaxInFlight;
            this.opsMaxWritesInFlight = opsMaxWritesInFlight;
            this.legacy = legacy;
            this.ops = ops;
            this.opsViewer = opsViewer;
            this.authFailures = authFailures;
            this.trustedProxies = trustedProxies == null ? java.util.List.of() : java.util.List.copyOf(trustedProxies);
        }

        public Credentials getLegacy() { return legacy; }
        public Credentials getOps() { return ops; }
        /** The look-only operator credential, or null when none is configured. */
        public Credentials getOpsViewer() { return opsViewer; }
        public AuthFailures getAuthFailures() { return authFailures; }
        public java.util.List<String> getTrustedProxies() { return trustedProxies; }
        public int getOpsMaxInFlight() { return opsMaxInFlight; }
        public int getOpsMaxWritesInFlight() { return opsMaxWritesInFlight; }
    }

    /**
     * Failed Basic authentications per client address (see {@code AuthFailureLimiter}): {@code burst} at once,
     * then {@code perMinute}; beyond that a request from the address whose credentials are wrong gets 429
     * instead of 401. A request whose credentials are right is never refused, so nobody can lock another
     * client (or a credential) out by failing in its name.
     */
    public static class AuthFailures {
        /** false: no limit. */
        private final boolean enabled;
        /** Failures (count) an address may have at once. */
        @Min(1) private final int burst;
        /** Failures per minute an address earns back. */
        @Min(1) private final int perMinute;
        /**
         * Addresses (count) remembered at most; an address is forgotten once it has earned all its failures
         * back. Beyond this, new addresses share one bucket: a flood of addresses limits itself and never
         * pushes out (resets) another address's limit.
         */
        @Min(1) private final int maxAddresses;

        public AuthFailures(@DefaultValue("true") boolean enabled,
                @DefaultValue("100") int burst,
                @DefaultValue("100") int perMinute,
                @DefaultValue("10000") int maxAddresses) {
            this.enabled = enabled;
            this.burst = burst;
            this.perMinute = perMinute;
            this.maxAddresses = maxAddresses;
        }

        public boolean isEnabled() { return enabled; }
        public int getBurst() { return burst; }
        public int getPerMinute() { return perMinute; }
        public int getMaxAddresses() { return maxAddresses; }
    }

    public static class Credentials {
        /** HTTP Basic user name. */
        @NotBlank private final String username;
        /** HTTP Basic password: from the environment or a Secret, never from a file in the repository. */
        @NotBlank private final String password;
        /**
         * The password that replaces {@code password}, accepted beside it while it is rotated (optional). Set first,
         * rolled out, then given to the client, and only once the client sends it alone does it become
         * {@code password} (docs/operations.md, "Rotating a password"): every pod accepts what the client sends at
         * each step; an older image (which knows no next password) accepts only the password, so no rollback to one
         * once the client sends the next password, until it has become the password. Blank is unset.
         */
        private final String nextPassword;

        public Credentials(String username,
                String password,
                String nextPassword) {
            this.username = username;
            this.password = password;
            this.nextPassword = nextPassword == null || nextPassword.isBlank() ? null : nextPassword;
        }

        public String getUsername() { return username; }
        public String getPassword() { return password; }
        public String getNextPassword() { return nextPassword; }
    }
}
