package com.hospital.surveyinbox.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** The limiter's memory: bounded, and a flood of addresses never resets the limit of one already counted. */
class AuthFailureLimiterTest {

    static AuthFailureLimiter limiter(int burst, int maxAddresses) {
        return new AuthFailureLimiter(new AdapterProperties.AuthFailures(true, burst, 1, maxAddresses), new SimpleMeterRegistry());
    }

    /**
     * CONTRACT §1: wrong credentials are a 401. With the shipped settings (config/application.yaml, and the defaults
     * when a key is absent) a client checking its own error handling, or several senders behind one address, get it
     * dozens of times a minute: with the earlier defaults (10 at once) the eleventh got 429.
     */
    @Test
    void theShippedSettingsAnswerDozensOfWrongCredentialsFromOneAddressAsWrong() throws Exception {
        var shipped = new org.springframework.boot.env.YamlPropertySourceLoader().load("shipped",
                new org.springframework.core.io.FileSystemResource("config/application.yaml"));
        for (var binder : java.util.List.of(
                new org.springframework.boot.context.properties.bind.Binder(
                        org.springframework.boot.context.properties.source.ConfigurationPropertySources.from(shipped)),
                new org.springframework.boot.context.properties.bind.Binder(
                        new org.springframework.boot.context.properties.source.MapConfigurationPropertySource(java.util.Map.of())))) {
            AdapterProperties.AuthFailures settings = binder.bindOrCreate("adapter.security.auth-failures", AdapterProperties.AuthFailures.class);
            assertThat(settings.isEnabled()).isTrue();
            AuthFailureLimiter limiter = new AuthFailureLimiter(settings, new SimpleMeterRegistry());
            for (int i = 0; i < 60; i++) {
                assertThat(limiter.failed("127.0.0.1")).as("wrong credential %d: 401, not 429", i + 1).isFalse();
            }
        }
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
