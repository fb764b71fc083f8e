package com.hospital.surveyinbox.processing;

import org.apache.camel.Header;
import org.apache.camel.component.kafka.KafkaConstants;
import org.apache.camel.component.kafka.consumer.KafkaManualCommit;
import org.springframework.stereotype.Component;

/**
 * Commits the record's offset once a worker has it ({@code routes/inbox-process.camel.yaml}, step
 * {@code inbox-process-commit-offset}, and the route's error policy): from then on the row, not Kafka,
 * carries it — a worker that never finishes leaves the row to the redelivery job, as a dead instance does.
 * Committing after a failure is deliberate for the same reason. The consumer route never touches its
 * headers (the worker clears those of its own copy), so the record's commit handle is still there.
 */
@Component("kafkaOffsets")
public class KafkaOffsets {

    public void commit(@Header(KafkaConstants.MANUAL_COMMIT) KafkaManualCommit commit) {
        if (commit != null) {
            commit.commit();
        }
    }
}
