package com.hospital.surveyinbox.processing;

import java.util.function.BooleanSupplier;
import org.apache.camel.Header;
import org.apache.camel.component.kafka.KafkaConstants;
import org.apache.camel.component.kafka.consumer.KafkaManualCommit;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.RetriableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * Commits the record's offset once a worker has it ({@code routes/inbox-process.camel.yaml}, step
 * {@code inbox-process-commit-offset}, and the route's error policy): from then on the row, not Kafka,
 * carries it — a worker that never finishes leaves the row to the redelivery job, as a dead instance does.
 * Committing after a failure is deliberate for the same reason. The consumer route never touches its
 * headers (the worker clears those of its own copy), so the record's commit handle is still there.
 * <ul>
 *   <li>While this instance stops, nothing is committed: what its consumer still reads is not started
 *       ({@link WorkersStoppingException}), and a later commit of the same partition (an unreadable record
 *       after it, a wait for a worker interrupted) would have skipped it too; the partition's next owner reads
 *       it again once this instance has left the group, and its claim refuses a row a worker here already took.
 *       This holds because Camel commits nothing itself here: no {@code kafkaManualCommitFactory} is set, so
 *       its commit manager is a no-op (one that commits would commit the refused records at the batch's end).</li>
 *   <li>A commit Kafka refuses for the moment (the group rebalancing, its coordinator moving, a timeout) is
 *       logged and left: the record comes again to the partition's next owner. Thrown, it reached the route's
 *       error policy as "not handed to a worker" (an ERROR, false: a worker has it) and was committed a second
 *       time, another wait inside the poll's budget. Anything else (an authorization error) still reaches the
 *       route: offsets that silently stop advancing would replay everything at the next rebalance.</li>
 * </ul>
 */
@Component("kafkaOffsets")
public class KafkaOffsets {

    private static final Logger log = LoggerFactory.getLogger(KafkaOffsets.class);

    private final BooleanSupplier stopping;

    @Autowired
    public KafkaOffsets(ProcessingWorkers inboxProcessPool) {
        this(() -> inboxProcessPool.isStopping() || inboxProcessPool.isShutdown());
    }

    KafkaOffsets(BooleanSupplier stopping) {
        this.stopping = stopping;
    }

    public void commit(@Header(KafkaConstants.MANUAL_COMMIT) KafkaManualCommit commit) {
        if (commit == null || stopping.getAsBoolean()) {
            return;
        }
        try {
            commit.commit();
        } catch (CommitFailedException | RebalanceInProgressException | RetriableException refused) {
            log.warn("Offset not committed ({}): the record comes again to the partition's next owner, whose claim "
                    + "refuses a row already taken", refused.getClass().getSimpleName());
        }
    }
}
