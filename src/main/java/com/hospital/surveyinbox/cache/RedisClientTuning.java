package com.hospital.surveyinbox.cache;

import io.lettuce.core.ClientOptions;
import org.springframework.boot.autoconfigure.data.redis.LettuceClientOptionsBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * With Lettuce's default, commands issued while Redis is unreachable queue up until the command
 * timeout; rejecting them at once lets a Redis outage cost nothing but a cache miss (the waiters of a
 * lookup share its answer in memory).
 * <p>
 * A customizer of Boot's own client options, not a replacement of them: Boot puts
 * {@code spring.data.redis.connect-timeout} (and an SSL bundle's trust) into those options, and new options
 * set on the client configuration instead would silently fall back to Lettuce's 10 s connect timeout.
 */
@Configuration
public class RedisClientTuning {

    @Bean
    LettuceClientOptionsBuilderCustomizer rejectWhileDisconnected() {
        return options -> options
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
    }
}
