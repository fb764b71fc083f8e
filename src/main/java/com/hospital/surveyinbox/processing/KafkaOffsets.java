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
 * <p>A commit Kafka refuses (the group rebalancing, its coordinator moving after a broker failure, a timeout) is
 * logged and left: the record comes again to whoever owns the partition next, and the claim refuses a row that is
 * already taken. Thrown, it reached the route's error policy as "not handed to a worker" (an ERROR, false: a worker
 * has it) and was committed a second time, another wait of the commit timeout inside the poll's budget.
 */
@Component("kafkaOffsets")
public class KafkaOffsets {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(KafkaOffsets.class);

    public void commit(@Header(KafkaConstants.MANUAL_COMMIT) KafkaManualCommit commit) {
        if (commit == null) {
            return;
        }
        try {
            commit.commit();
        } catch (org.apache.kafka.common.KafkaException refused) {
            log.warn("Offset not committed ({}): the record comes again to the partition's next owner, whose claim "
                    + "refuses a row already taken", refused.getClass().getSimpleName());
        }
    }
}
