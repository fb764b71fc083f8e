package com.hospital.surveyinbox.cache;

import io.lettuce.core.ClientOptions;
import org.springframework.boot.autoconfigure.data.redis.LettuceClientConfigurationBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * With Lettuce's default, commands issued while Redis is unreachable queue up until the command
 * timeout; rejecting them at once lets a Redis outage cost nothing but a cache miss.
 */
@Configuration
public class RedisClientTuning {

    @Bean
    LettuceClientConfigurationBuilderCustomizer rejectWhileDisconnected() {
        return builder -> builder.clientOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build());
    }
}
