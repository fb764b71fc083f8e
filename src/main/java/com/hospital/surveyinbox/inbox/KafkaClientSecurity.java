package com.hospital.surveyinbox.inbox;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.core.env.Environment;

/**
 * The security settings the routes' Kafka component is given ({@code camel.component.kafka.*}: TLS, SASL), as Kafka
 * client settings for the service's own admin clients (the topic check, the {@code kafka} health). Without them those
 * two spoke plain text to a broker the routes reach over TLS or SASL: the health stayed DOWN and the topic was never
 * checked, while events flowed. Security settings given through {@code camel.component.kafka.additional-properties}
 * are taken too.
 */
public final class KafkaClientSecurity {

    /** Camel's option (camel.component.kafka.&lt;option&gt;) and the Kafka client setting it stands for. */
    static final Map<String, String> SETTINGS = Map.ofEntries(
            Map.entry("security-protocol", "security.protocol"),
            Map.entry("sasl-mechanism", "sasl.mechanism"),
            Map.entry("sasl-jaas-config", "sasl.jaas.config"),
            Map.entry("ssl-protocol", "ssl.protocol"),
            Map.entry("ssl-endpoint-algorithm", "ssl.endpoint.identification.algorithm"),
            Map.entry("ssl-truststore-location", "ssl.truststore.location"),
            Map.entry("ssl-truststore-password", "ssl.truststore.password"),
            Map.entry("ssl-truststore-type", "ssl.truststore.type"),
            Map.entry("ssl-keystore-location", "ssl.keystore.location"),
            Map.entry("ssl-keystore-password", "ssl.keystore.password"),
            Map.entry("ssl-keystore-type", "ssl.keystore.type"),
            Map.entry("ssl-key-password", "ssl.key.password"));

    private KafkaClientSecurity() {
    }

    /** An admin client's settings: {@code security} ({@link #of}), the brokers and the client's two timeouts. */
    static Map<String, Object> admin(Map<String, Object> security, String brokers, int requestTimeoutMs, int apiTimeoutMs) {
        Map<String, Object> config = new LinkedHashMap<>(security);
        config.put(org.apache.kafka.clients.admin.AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        config.put(org.apache.kafka.clients.admin.AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, requestTimeoutMs);
        config.put(org.apache.kafka.clients.admin.AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, apiTimeoutMs);
        return Map.copyOf(config);
    }

    /**
     * The Kafka client settings of the component's security options that are set (none: plain text, Kafka's default),
     * as Camel hands them to its clients: an endpoint algorithm {@code none} or {@code false} turns hostname
     * checking off (an empty setting; Kafka itself refuses "none"), store types in upper case (Kafka knows "PEM").
     */
    public static Map<String, Object> of(Environment environment) {
        Map<String, Object> settings = new LinkedHashMap<>();
        SETTINGS.forEach((camel, kafka) -> {
            String value = environment.getProperty("camel.component.kafka." + camel);
            if (value == null || value.isBlank()) {
                return;
            }
            if (camel.equals("ssl-endpoint-algorithm") && (value.equalsIgnoreCase("none") || value.equalsIgnoreCase("false"))) {
                settings.put(kafka, "");
            } else if (camel.endsWith("store-type")) {
                settings.put(kafka, value.toUpperCase(java.util.Locale.ROOT));
            } else {
                settings.put(kafka, value);
            }
        });
        // what Camel's named options cannot say (an OAUTHBEARER or IAM login: sasl.login.callback.handler.class,
        // sasl.client.callback.handler.class, ...) is given through additional-properties, which Camel hands to its
        // clients as they are; without them here the health stayed DOWN and the topic unchecked. Client security
        // settings only: a consumer's or producer's own (max.poll.records, linger.ms) are no admin client's
        org.springframework.boot.context.properties.bind.Binder.get(environment)
                .bind("camel.component.kafka.additional-properties",
                        org.springframework.boot.context.properties.bind.Bindable.mapOf(String.class, String.class))
                .ifBound(additional -> additional.forEach((key, value) -> {
                    if (key.startsWith("sasl.") || key.startsWith("ssl.") || key.equals("security.protocol")) {
                        settings.put(key, value);
                    }
                }));
        return settings;
    }
}
