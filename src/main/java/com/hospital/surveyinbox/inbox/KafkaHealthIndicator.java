package com.hospital.surveyinbox.inbox;

import com.hospital.surveyinbox.config.AdapterProperties;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.stereotype.Component;

/**
 * Kafka in {@code /actuator/health} details. Deliberately not in the readiness group: reception does not
 * need Kafka (a row stored while the broker is away is republished by the redelivery job), so a broker
 * outage must not take the reception endpoint out of the load balancer. DOWN also while the event topic has not
 * been checked since the start ({@link KafkaTopicProvisioner}: the broker was away then).
 */
@Component("kafka")
public class KafkaHealthIndicator extends AbstractHealthIndicator implements DisposableBean {

    private final Map<String, Object> adminConfig;
    /** Made at the first check, not at start: a bootstrap name that does not resolve must not stop the pod. */
    private Admin admin;
    private final String topic;
    private final KafkaTopicProvisioner provisioner;

    public KafkaHealthIndicator(@Value("${camel.component.kafka.brokers}") String brokers, AdapterProperties properties,
                                KafkaTopicProvisioner provisioner, org.springframework.core.env.Environment environment) {
        super("Kafka health check failed");
        // with the routes' TLS/SASL settings: asked in plain text, a broker that wants them never answered
        this.adminConfig = KafkaClientSecurity.admin(KafkaClientSecurity.of(environment), brokers, 2_000, 3_000);
        this.topic = properties.getKafka().getTopic();
        this.provisioner = provisioner;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) throws Exception {
        // the client refuses a bootstrap list none of whose names resolves ("No resolvable bootstrap urls"): DOWN
        // with that reason (AbstractHealthIndicator), asked again at the next check
        var cluster = admin().describeCluster(new DescribeClusterOptions().timeoutMs(2_000));
        int nodes = cluster.nodes().get(3, TimeUnit.SECONDS).size();
        builder.withDetail("clusterId", cluster.clusterId().get(3, TimeUnit.SECONDS)).withDetail("brokers", nodes);
        if (provisioner.ensured()) {
            builder.up().withDetail("topic", topic);
        } else {
            // the broker answers now, but the topic was not checked since: it may be missing, or the broker's default
            builder.down().withDetail("topic", topic + ": not checked yet (asked again every "
                    + KafkaTopicProvisioner.RETRY.toSeconds() + " s)");
        }
    }

    private synchronized Admin admin() {
        if (admin == null) {
            admin = Admin.create(adminConfig);
        }
        return admin;
    }

    @Override
    public synchronized void destroy() {
        if (admin != null) {
            admin.close(java.time.Duration.ofSeconds(2));
        }
    }
}
