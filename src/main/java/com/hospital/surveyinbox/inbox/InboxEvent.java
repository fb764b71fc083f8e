package com.hospital.surveyinbox.inbox;

import com.fasterxml.jackson.annotation.JsonIgnore;

/**
 * The Kafka event "row stored": identifiers only, never patient data. Key = srvyDrawupNo, so all
 * events of one subject share a partition and are consumed in order. The trace context of the row travels as
 * the record's {@code traceparent} header, not in the value.
 */
public record InboxEvent(String inboxId, String srvyDrawupNo, String msgType,
                         @JsonIgnore String traceParent) {

    public InboxEvent(String inboxId, String srvyDrawupNo, String msgType) {
        this(inboxId, srvyDrawupNo, msgType, null);
    }
}
