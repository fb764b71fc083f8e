package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * A commit Kafka refuses (a rebalance, the coordinator moving, a timeout) leaves the record to the partition's next
 * owner: it is not the route's failure to hand the record over (a worker has it), so it does not reach the route's
 * error policy, which logged a false ERROR and committed a second time inside the poll's budget. A real broker
 * refuses commits only in the middle of a rebalance, so the commit handle here is one that refuses.
 */
class KafkaOffsetsTest {

    @Test
    void aCommitKafkaRefusesIsLoggedNotThrown() {
        KafkaOffsets offsets = new KafkaOffsets();
        assertThatCode(() -> offsets.commit(() -> { throw new CommitFailedException(); })).doesNotThrowAnyException();
        assertThatCode(() -> offsets.commit(() -> { throw new RebalanceInProgressException(); })).doesNotThrowAnyException();
        assertThatCode(() -> offsets.commit(() -> { throw new TimeoutException("commit"); })).doesNotThrowAnyException();
        assertThatCode(() -> offsets.commit(null)).doesNotThrowAnyException();
        // anything else is still the route's to handle
        assertThatThrownBy(() -> offsets.commit(() -> { throw new IllegalStateException("closed"); }))
                .isInstanceOf(IllegalStateException.class);
    }
}
