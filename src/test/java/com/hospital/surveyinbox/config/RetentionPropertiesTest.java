package com.hospital.surveyinbox.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Settings checked at startup: how long finished rows stay (a shorter setting is refused), the redelivery tick's bounds. */
class RetentionPropertiesTest {

    private static AdapterProperties.Retention retention(String completed, String dead, String keepFinished,
                                                        String keepResendable) {
        return new AdapterProperties.Retention(true, Duration.parse(completed), Duration.parse(dead), "0 30 3 * * ?",
                1000, 500, keepFinished == null ? null : Duration.parse(keepFinished),
                keepResendable == null ? null : Duration.parse(keepResendable));
    }

    @Test
    void unsetHorizonsAreNinetyAndFourHundredDaysOrLongerWherePayloadsStayLonger() {
        assertThat(retention("P30D", "P90D", null, null).getKeepFinished()).isEqualTo(Duration.ofDays(90));
        assertThat(retention("P30D", "P90D", null, null).getKeepResendable()).isEqualTo(Duration.ofDays(400));
        // an installation that kept DEAD payloads for half a year starts after the upgrade, with rows kept as long
        assertThat(retention("P30D", "P180D", null, null).getKeepFinished()).isEqualTo(Duration.ofDays(180));
        assertThat(retention("P30D", "P500D", null, null).getKeepResendable()).isEqualTo(Duration.ofDays(500));
    }

    @Test
    void aHorizonShorterThanWhatItMustOutliveIsRefusedWithTheReason() {
        assertThatThrownBy(() -> retention("P30D", "P90D", "P60D", null))
                .hasMessageContaining("keep-finished (60 days) must be at least adapter.retention.dead (90 days)");
        assertThatThrownBy(() -> retention("P30D", "P90D", "P120D", "P100D"))
                .hasMessageContaining("keep-resendable (100 days) must be at least adapter.retention.keep-finished (120 days)");
        assertThat(retention("P30D", "P90D", "P120D", "P365D").getKeepResendable()).isEqualTo(Duration.ofDays(365));
    }

    private static AdapterProperties.Inbox inbox(String publishDeadline, String retryDelay, String replyMaxRetryDelay) {
        return new AdapterProperties.Inbox(true, 5, Duration.parse(retryDelay), Duration.ofMinutes(2), Duration.ofMinutes(15),
                "0 * * * * ?", 200, true, 7, Duration.parse(publishDeadline), 500, 10, Duration.parse(replyMaxRetryDelay), 24,
                Duration.ofSeconds(20));
    }

    @Test
    void aRedeliveryTickNeedsAPositiveDeadlineAndRepliesABackoffCapAboveRetryDelay() {
        assertThatThrownBy(() -> inbox("PT0S", "PT1M", "PT1H"))
                .hasMessageContaining("adapter.inbox.redeliver-publish-deadline (PT0S) must be positive");
        assertThatThrownBy(() -> inbox("PT30S", "PT1M", "PT30S"))
                .hasMessageContaining("adapter.inbox.reply-max-retry-delay (PT30S) must be at least adapter.inbox.retry-delay (PT1M)");
        assertThat(inbox("PT30S", "PT1M", "PT1H").getReplyMaxRetryDelay()).isEqualTo(Duration.ofHours(1));
    }

    /** A bulk requeue with no time would start no row at all and answer every matching row as remaining. */
    @Test
    void aBulkRequeueNeedsAPositiveTime() {
        assertThatThrownBy(() -> new AdapterProperties.Inbox(true, 5, Duration.ofMinutes(1), Duration.ofMinutes(2),
                Duration.ofMinutes(15), "0 * * * * ?", 200, true, 7, Duration.ofSeconds(30), 500, 10, Duration.ofHours(1), 24,
                Duration.ZERO)).hasMessageContaining("adapter.inbox.bulk-requeue-within (PT0S) must be positive");
    }
}
