package com.hospital.surveyinbox.processing;

import org.apache.camel.ExchangeProperty;
import org.apache.camel.component.kafka.consumer.KafkaManualCommit;
import org.springframework.stereotype.Component;

/**
 * Commits the record's offset once a worker has it ({@code routes/inbox-process.camel.yaml}, step
 * {@code inbox-process-commit-offset}, and the route's error policy): from then on the row, not Kafka,
 * carries it — a worker that never finishes leaves the row to the redelivery job, as a dead instance does.
 * Committing after a failure is deliberate for the same reason. The commit handle is kept in an exchange
 * property, apart from the headers.
 */
@Component("kafkaOffsets")
public class KafkaOffsets {

    /** Exchange property holding the record's {@link KafkaManualCommit}. */
    public static final String COMMIT = "kafkaCommit";

    public void commit(@ExchangeProperty(COMMIT) KafkaManualCommit commit) {
        if (commit != null) {
            commit.commit();
        }
    }
}
