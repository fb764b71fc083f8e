package com.hospital.surveyinbox.inbox;

/**
 * The Kafka event "row stored": identifiers only, never patient data. Key = srvyDrawupNo, so all
 * events of one subject share a partition and are consumed in order.
 */
public record InboxEvent(String inboxId, String srvyDrawupNo, String msgType) {
}
