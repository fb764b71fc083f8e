package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;

/**
 * A commit Kafka refuses for the moment (a rebalance, the coordinator moving, a timeout) leaves the record to the
 * partition's next owner: it is not the route's failure to hand the record over (a worker has it), so it does not
 * reach the route's error policy, which logged a false ERROR and committed a second time inside the poll's budget;
 * a permanent refusal still does. While the instance stops nothing is committed. A real broker refuses commits only
 * in the middle of a rebalance, so the commit handles here are ones that refuse (the stop itself:
 * ProcessingWorkersTest).
 */
class KafkaOffsetsTest {

    @Test
    void aCommitKafkaRefusesForTheMomentIsLoggedNotThrown() {
        KafkaOffsets offsets = new KafkaOffsets(() -> false);
        assertThatCode(() -> offsets.commit(() -> { throw new CommitFailedException(); })).doesNotThrowAnyException();
        assertThatCode(() -> offsets.commit(() -> { throw new RebalanceInProgressException(); })).doesNotThrowAnyException();
        assertThatCode(() -> offsets.commit(() -> { throw new TimeoutException("commit"); })).doesNotThrowAnyException();
        assertThatCode(() -> offsets.commit(null)).doesNotThrowAnyException();
        // a refusal that will not pass is still the route's
        assertThatThrownBy(() -> offsets.commit(() -> { throw new TopicAuthorizationException("no"); }))
                .isInstanceOf(TopicAuthorizationException.class);
    }

    @Test
    void nothingIsCommittedWhileTheInstanceStops() {
        AtomicInteger commits = new AtomicInteger();
        new KafkaOffsets(() -> true).commit(commits::incrementAndGet);
        new KafkaOffsets(() -> false).commit(commits::incrementAndGet);
        assertThat(commits).hasValue(1);
    }
}
