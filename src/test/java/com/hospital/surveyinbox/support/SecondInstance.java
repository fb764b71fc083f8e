package com.hospital.surveyinbox.support;

import com.hospital.surveyinbox.SurveyInboxAdapterApplication;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The test profile ({@code test.properties}) as settings, and another instance of the service started with
 * it in this JVM, on the same embedded services: for tests and benchmark phases that need a second
 * instance with a few settings of its own (a cluster peer, the rollback toggle, a consumer count).
 */
public final class SecondInstance {

    private SecondInstance() {
    }

    /** {@code test.properties}, key by key. */
    public static Map<String, String> testProfile() {
        Properties test = new Properties();
        try (InputStream in = SecondInstance.class.getResourceAsStream("/test.properties")) {
            test.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> settings = new LinkedHashMap<>();
        test.stringPropertyNames().forEach(k -> settings.put(k, test.getProperty(k)));
        return settings;
    }

    /** The service with the test profile and {@code overrides}, in this JVM. */
    public static ConfigurableApplicationContext start(Map<String, String> overrides) {
        Map<String, String> settings = testProfile();
        settings.putAll(overrides);
        // as arguments: builder "properties" are defaults, which ./config/application.yaml would override
        String[] args = settings.entrySet().stream().map(e -> "--" + e.getKey() + "=" + e.getValue()).toArray(String[]::new);
        return new SpringApplicationBuilder(SurveyInboxAdapterApplication.class).profiles("test").run(args);
    }
}
