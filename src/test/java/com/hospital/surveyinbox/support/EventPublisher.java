package com.hospital.surveyinbox.support;

import com.hospital.surveyinbox.inbox.InboxEvent;
import org.apache.camel.Exchange;
import org.apache.camel.ProducerTemplate;

/**
 * Publishes an inbox event through the service's own publish route ({@code routes/inbox-publish.camel.yaml}), as
 * the redelivery job or a requeue would: for tests that hand a row's event to the worker themselves.
 */
public final class EventPublisher {

    private EventPublisher() {
    }

    /** Whether the broker took the event (the route's answer, {@code inboxPublished}). */
    public static boolean publish(ProducerTemplate producer, InboxEvent event) {
        Exchange result = producer.send("direct:inbox-publish", exchange -> exchange.getMessage().setBody(event));
        return result.getException() == null && result.getProperty("inboxPublished", false, Boolean.class);
    }
}
