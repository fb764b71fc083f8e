package com.hospital.surveyinbox.support;

import com.hospital.surveyinbox.config.AdapterProperties;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.validation.ValidationAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/** The {@code adapter.*} settings bound and validated alone, with the keys that have no default, for tests of settings. */
public final class BoundSettings {

    @Configuration
    @EnableConfigurationProperties(AdapterProperties.class)
    static class Bound {
    }

    private BoundSettings() {
    }

    /** A context runner that binds AdapterProperties (add properties with withPropertyValues). */
    public static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ValidationAutoConfiguration.class))
                .withUserConfiguration(Bound.class)
                .withPropertyValues("adapter.legacy.base-url=http://legacy", "adapter.account.base-url=http://account",
                        "adapter.survey.base-url=http://survey", "adapter.security.legacy.username=legacy",
                        "adapter.security.legacy.password=legacy-secret-1234", "adapter.security.ops.username=ops",
                        "adapter.security.ops.password=ops-secret-12345678");
    }
}
