package com.hospital.surveyinbox.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.TestProperties;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.camel.Exchange;
import org.junit.jupiter.api.Test;

/**
 * The room of a pod's paced republisher (the queue of {@code seda:inbox-requeue-publish}): an event counts once,
 * in a reservation until it is queued and in the queue after; the capacity follows the wait the route really
 * makes. The route around it is pinned by InboxRequeueRouteTest and RedeliveryTest.
 */
class PacedRepublisherTest {

    private final BlockingQueue<Exchange> queue = new LinkedBlockingQueue<>();

    private static final org.apache.camel.CamelContext CAMEL = new org.apache.camel.impl.DefaultCamelContext();

    /** A queued event as the route leaves it (its content does not matter to the count). */
    private static Exchange event() {
        return new org.apache.camel.support.DefaultExchange(CAMEL);
    }

    private PacedRepublisher paced(String ratePerSecond, String lostEventAfter) {
        return new PacedRepublisher(queue, TestProperties.bind(Map.of(
                "adapter.inbox.bulk-requeue-rate-per-second", ratePerSecond,
                "adapter.inbox.lost-event-after", lostEventAfter)));
    }

    @Test
    void anEventQueuedDuringABulkRequeueIsCountedOnce() {
        PacedRepublisher paced = paced("10", "PT2M"); // room for 600
        PacedRepublisher.Reservation first = paced.reserve(500);

        for (int i = 0; i < 400; i++) { // the first call has queued 400 of its 500 rows' events
            queue.add(event());
            paced.queued(first);
        }

        assertThat(paced.pending()).isEqualTo(500);
        PacedRepublisher.Reservation second = paced.reserve(500); // a second operator meanwhile
        assertThat(second.getGranted()).isEqualTo(100);
        paced.release(first); // the first call ends having queued 400: its other 100 are free again
        paced.release(second);
        assertThat(paced.pending()).isEqualTo(400);
        assertThat(paced.reserve(1000).getGranted()).isEqualTo(200);
    }

    @Test
    void aReleaseAfterAFailureHandsBackOnlyWhatWasNotQueued() {
        PacedRepublisher paced = paced("2", "PT2S"); // room for 2
        PacedRepublisher.Reservation call = paced.reserve(5);
        assertThat(call.getGranted()).isEqualTo(2);
        queue.add(event());
        paced.queued(call);
        queue.add(event()); // queued, then the call failed before counting it

        paced.release(call);
        paced.release(call); // twice changes nothing

        assertThat(paced.pending()).isEqualTo(2);
        assertThat(paced.reserve(1).getGranted()).isZero();
    }

    @Test
    void theRoomFollowsTheWaitTheRouteMakes() {
        // 700/s is a 2 ms wait (whole milliseconds, rounded up: never faster than set): 500 events a second, so
        // 1 s of them (half of 2 s) is 500
        assertThat(paced("700", "PT2S").periodMillis()).isEqualTo(2);
        assertThat(paced("700", "PT2S").reserve(5000).getGranted()).isEqualTo(500);
        assertThat(paced("1000", "PT2S").periodMillis()).isEqualTo(1);
        assertThat(paced("3", "PT2M").periodMillis()).isEqualTo(334);
        assertThat(paced("3", "PT2M").reserve(5000).getGranted()).isEqualTo(179);
    }
}
