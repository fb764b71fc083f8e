package com.hospital.surveyinbox.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * The downstream base URLs (CONTRACT §5) without their trailing '/': the routes append "/patients/…" to
 * {@code {{adapter.legacy.base-url}}}, and a base URL written with a trailing slash (a stub's {@code url("/")}, an
 * environment variable copied from a browser) stopped the boot on {@link AdapterProperties}' check, or would have sent
 * "//patients". Runs after the configuration is loaded (files, environment variables, system properties, arguments;
 * not a test's own initializers, which come later) and puts the stripped values first, so the binding and Camel's
 * placeholders read the same URL. Registered in {@code META-INF/spring.factories}.
 */
public class BaseUrlSlashes implements EnvironmentPostProcessor, Ordered {

    static final List<String> KEYS = List.of("adapter.legacy.base-url", "adapter.account.base-url", "adapter.survey.base-url");

    static final String SOURCE = "adapter-base-urls-without-trailing-slash";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        Map<String, Object> stripped = new LinkedHashMap<>();
        for (String key : KEYS) {
            String value = environment.getProperty(key);
            if (value != null && value.endsWith("/")) {
                String url = value;
                while (url.endsWith("/")) {
                    url = url.substring(0, url.length() - 1);
                }
                stripped.put(key, url);
            }
        }
        if (!stripped.isEmpty()) {
            environment.getPropertySources().addFirst(new MapPropertySource(SOURCE, stripped));
        }
    }

    /** After Boot's own (the configuration files are loaded by then). */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
