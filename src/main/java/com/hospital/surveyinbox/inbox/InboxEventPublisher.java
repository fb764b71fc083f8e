package com.hospital.surveyinbox.inbox;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.springframework.stereotype.Component;

/**
 * Turns an inbox row into its Kafka event ({@link #event}, {@link #json}: steps of
 * {@code routes/inbox-publish.camel.yaml}, which drops every inbound header before the send, so nothing from
 * the HTTP request (Authorization!) can leak into Kafka record headers), reads an event back
 * ({@link #inboxIdOf}).
 */
@Component("inboxEventPublisher")
public class InboxEventPublisher {

    /** Counter of events not published (Kafka away or refusing): alert SurveyInboxEventsNotPublished. */
    public static final String PUBLISH_FAILURES = "adapter.inbox.publish.failures";

    private final ObjectMapper objectMapper;
    private final io.micrometer.core.instrument.Counter publishFailures;

    public InboxEventPublisher(ObjectMapper objectMapper, io.micrometer.core.instrument.MeterRegistry meters) {
        this.objectMapper = objectMapper;
        // at zero from the start: the first failure is an increase the alert sees
        this.publishFailures = meters.counter(PUBLISH_FAILURES);
    }

    /**
     * An event not published (step inbox-publish-not-published): its row stays as it is and the redelivery job
     * republishes it; counted, as a broker away leaves receptions answering while nothing is processed.
     */
    public void notPublished() {
        publishFailures.increment();
    }

    /**
     * The event of {@code body}: an {@link Acceptance}, an {@link InboxEvent} or a row read by camel-sql (a map
     * with inboxId, srvyDrawupNo, msgType and traceParent).
     */
    public InboxEvent event(Object body) {
        if (body instanceof Acceptance acceptance) {
            return acceptance.event();
        }
        if (body instanceof java.util.Map<?, ?> row) {
            return new InboxEvent(String.valueOf(row.get("inboxId")), (String) row.get("srvyDrawupNo"),
                    (String) row.get("msgType"), (String) row.get("traceParent"));
        }
        return (InboxEvent) body;
    }

    /** The event as the record's JSON value. */
    public String json(InboxEvent event) throws JsonProcessingException {
        return objectMapper.writeValueAsString(event);
    }

    /**
     * The inbox id an event names ({@code routes/inbox-process.camel.yaml}, the key of the claim), or null
     * when the event cannot be read.
     */
    public String inboxIdOf(String eventJson) {
        try {
            com.fasterxml.jackson.databind.JsonNode event = eventJson == null ? null : objectMapper.readTree(eventJson);
            String id = event == null ? null : event.path("inboxId").asText(null);
            return id == null ? null : Long.toString(Long.parseLong(id));
        } catch (JsonProcessingException | NumberFormatException e) {
            return null;
        }
    }
}
