package com.hospital.surveyinbox.support;

import java.util.Map;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.server.policy.CreateTopicPolicy;

/**
 * The test broker's topic-creation policy: a cluster that caps retention at 7 days (a managed tier's), for topics
 * named {@value #CAPPED}* only (KafkaTopicProvisionerTest); every other topic is created as asked.
 */
public class RetentionCapPolicy implements CreateTopicPolicy {

    public static final String CAPPED = "provisioner-capped-";
    private static final long SEVEN_DAYS = 7L * 24 * 3600 * 1000;

    @Override
    public void validate(RequestMetadata request) throws PolicyViolationException {
        String retention = request.configs().get("retention.ms");
        if (request.topic().startsWith(CAPPED) && retention != null && Long.parseLong(retention) > SEVEN_DAYS) {
            throw new PolicyViolationException("retention.ms above 7 days is not allowed on this cluster");
        }
    }

    @Override
    public void configure(Map<String, ?> configs) {
    }

    @Override
    public void close() {
    }
}
