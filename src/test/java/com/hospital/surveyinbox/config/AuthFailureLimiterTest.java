package com.hospital.surveyinbox.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** The limiter's memory: bounded, and a flood of addresses never resets the limit of one already counted. */
class AuthFailureLimiterTest {

    static AuthFailureLimiter limiter(int burst, int maxAddresses) {
        return new AuthFailureLimiter(new AdapterProperties.AuthFailures(true, burst, 1, maxAddresses), new SimpleMeterRegistry());
    }

    @Test
    void anAddressIsLimitedAfterItsBurstAndOthersAreNot() {
        AuthFailureLimiter limiter = limiter(3, 100);
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.failed("192.0.2.9")).isFalse();
        }
        assertThat(limiter.failed("192.0.2.9")).isTrue();
        assertThat(limiter.retryAfterSeconds("192.0.2.9")).isBetween(1L, 60L);
        assertThat(limiter.failed("192.0.2.10")).isFalse();
    }

    @Test
    void aFloodOfAddressesStaysBoundedAndNeverResetsACountedAddress() {
        AuthFailureLimiter limiter = limiter(3, 100);
        for (int i = 0; i < 3; i++) {
            limiter.failed("192.0.2.9");
        }
        int floodLimited = 0;
        for (int i = 0; i < 20_000; i++) {
            if (limiter.failed("flood-" + i)) {
                floodLimited++;
            }
        }
        assertThat(limiter.size()).isLessThanOrEqualTo(100);
        // the counted address is still limited: nothing the flood did pushed it out
        assertThat(limiter.failed("192.0.2.9")).isTrue();
        // the flood beyond the table shares one bucket and so limits itself
        assertThat(floodLimited).isGreaterThan(19_000);
    }

    @Test
    void disabledLimitsNothing() {
        AuthFailureLimiter limiter = new AuthFailureLimiter(new AdapterProperties.AuthFailures(false, 1, 1, 10), new SimpleMeterRegistry());
        for (int i = 0; i < 10; i++) {
            assertThat(limiter.failed("192.0.2.9")).isFalse();
        }
    }
}
