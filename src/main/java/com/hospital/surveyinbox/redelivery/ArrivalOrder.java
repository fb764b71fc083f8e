package com.hospital.surveyinbox.redelivery;

import java.util.Comparator;
import java.util.Map;
import org.springframework.stereotype.Component;

/**
 * Arrival order of inbox rows read by camel-sql (maps with {@code inboxId}): the {@code comparator} of the
 * {@code sort} step {@code inbox-redeliver-order-events} ({@code routes/inbox-redeliver.camel.yaml}), so
 * the rows of one subject are republished in the order they were received.
 */
@Component("arrivalOrder")
public class ArrivalOrder implements Comparator<Map<String, Object>> {

    @Override
    public int compare(Map<String, Object> a, Map<String, Object> b) {
        return Long.compare(((Number) a.get("inboxId")).longValue(), ((Number) b.get("inboxId")).longValue());
    }
}
