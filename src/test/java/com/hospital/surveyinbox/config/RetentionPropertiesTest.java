package com.hospital.surveyinbox.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How long finished rows stay: the defaults follow the payload periods, and a shorter setting is refused. */
class RetentionPropertiesTest {

    private static AdapterProperties.Retention retention(String completed, String dead, String keepFinished,
                                                        String keepResendable) {
        return new AdapterProperties.Retention(true, Duration.parse(completed), Duration.parse(dead), "0 30 3 * * ?",
                1000, keepFinished == null ? null : Duration.parse(keepFinished),
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
}
