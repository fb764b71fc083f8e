package com.hospital.surveyinbox.processing;

import org.apache.camel.ExchangeProperty;
import org.apache.camel.component.kafka.consumer.KafkaManualCommit;
import org.springframework.stereotype.Component;

/**
 * Commits the record's offset once its outcome is on the row ({@code routes/inbox-process.camel.yaml},
 * step {@code inbox-process-commit-offset}, and the route's error policy). Committing after a failure is
 * deliberate: the row, not Kafka, decides retries. The commit handle is kept in an exchange property
 * because the registration clears every header before its first downstream call.
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
