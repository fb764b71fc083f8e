package com.hospital.surveyinbox.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/**
 * A downstream base URL written with a trailing slash (CONTRACT §5 keys; a stub's {@code url("/")}, an environment
 * variable) is read without it by the binding and by the routes' placeholders: it stopped the boot before.
 */
class BaseUrlSlashesTest {

    @Configuration(proxyBeanMethods = false)
    @org.springframework.boot.context.properties.EnableConfigurationProperties(AdapterProperties.class)
    static class Bound {
    }

    @Test
    void aBaseUrlWithATrailingSlashIsReadWithoutIt() {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(Bound.class)
                .web(WebApplicationType.NONE)
                .properties(Map.of(
                        "adapter.legacy.base-url", "http://legacy.hospital.local:8080/legacy/",
                        "adapter.account.base-url", "http://account:8080//",
                        "adapter.survey.base-url", "https://gw.hospital.local/survey/v1",
                        "adapter.security.legacy.username", "legacy",
                        "adapter.security.legacy.password", "legacy-test-secret",
                        "adapter.security.ops.username", "ops",
                        "adapter.security.ops.password", "ops-test-secret"))
                .run()) {
            var environment = context.getEnvironment();
            assertThat(environment.getProperty("adapter.legacy.base-url")).isEqualTo("http://legacy.hospital.local:8080/legacy");
            assertThat(environment.getProperty("adapter.account.base-url")).isEqualTo("http://account:8080");
            assertThat(environment.getProperty("adapter.survey.base-url")).isEqualTo("https://gw.hospital.local/survey/v1");
            AdapterProperties bound = context.getBean(AdapterProperties.class);
            assertThat(bound.getLegacy().getBaseUrl()).isEqualTo("http://legacy.hospital.local:8080/legacy");
            assertThat(bound.getAccount().getBaseUrl()).isEqualTo("http://account:8080");
        }
    }
}
