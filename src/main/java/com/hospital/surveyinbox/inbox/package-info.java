/**
 * The inbox table at reception: the group insert (the hot path, kept in Java), payload encryption, the
 * "row stored" event and its Kafka topic and health. Every later transition is a statement of
 * {@code src/main/resources/sql/} run by the routes; {@link com.hospital.surveyinbox.inbox.SqlFiles} reads
 * them for the one run from Java (the claim).
 */
package com.hospital.surveyinbox.inbox;
