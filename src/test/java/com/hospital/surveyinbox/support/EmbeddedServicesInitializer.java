package com.hospital.surveyinbox.support;

import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;

/**
 * Points a Spring context at the embedded services (starting them on first use). Registered for every
 * SpringApplication on the test classpath through {@code META-INF/spring.factories}, so tests and
 * {@code mvn spring-boot:test-run} share it. Explicit settings (env, args) of the downstream base URLs win.
 */
public class EmbeddedServicesInitializer implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    /** Bootstrap servers that replace the shared embedded broker for the context being created. */
    public static final String KAFKA_OVERRIDE = "embedded.kafka.brokers";

    /** A JDBC URL that replaces the embedded PostgreSQL's for the context being created (e.g. through a proxy). */
    public static final String POSTGRES_OVERRIDE = "embedded.postgres.url";

    /** A port that replaces the embedded Redis's for the context being created (e.g. a proxy's). */
    public static final String REDIS_PORT_OVERRIDE = "embedded.redis.port";

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        if (context.getParent() != null) {
            return; // the management child context inherits the parent's environment
        }
        if (Boolean.getBoolean("embedded.services.off")) {
            return; // a second service JVM (fault tests) points at the first JVM's services by arguments
        }
        EmbeddedServices services = EmbeddedServices.get();
        var env = context.getEnvironment();
        var properties = new java.util.LinkedHashMap<>(services.properties());
        properties.keySet().removeIf(key -> key.startsWith("adapter.") && key.endsWith(".base-url")
                && env.getProperty(key) != null && !env.getProperty(key).isBlank());
        String kafka = env.getProperty(KAFKA_OVERRIDE);
        if (kafka != null) { // a test with a broker of its own (one it stops and restarts)
            properties.put("spring.kafka.bootstrap-servers", kafka);
            properties.put("camel.component.kafka.brokers", kafka);
        }
        String postgres = env.getProperty(POSTGRES_OVERRIDE);
        if (postgres != null) { // a test between the service and the database (a proxy that freezes traffic)
            properties.put("spring.datasource.url", postgres);
        }
        String redisPort = env.getProperty(REDIS_PORT_OVERRIDE);
        if (redisPort != null) { // a test between the service and Redis (a proxy whose connections go silent)
            properties.put("spring.data.redis.port", Integer.parseInt(redisPort));
        }
        env.getPropertySources().addFirst(new MapPropertySource("embedded-services", properties));
        services.track(context);
    }
}
