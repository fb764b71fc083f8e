package com.hospital.surveyinbox.inbox;

/** A PROCESSING row the redelivery job reset: RECEIVED (republish it) or DEAD (it owes a reply). */
public record StuckRow(InboxEvent event, InboxStatus status) {
}
