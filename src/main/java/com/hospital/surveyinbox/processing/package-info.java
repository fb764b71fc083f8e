/**
 * The consumer half's Java: the claim as the idempotent repository of {@code inbox-process}, what the
 * registration route cannot say in YAML (bodies, outcomes, classifying an answer, masking patient values
 * in downstream text), the per-downstream circuit, the HTTP client tuning and the Kafka offset commit.
 * The order of the steps and every decision are in {@code routes/inbox-process|register|consents.camel.yaml}.
 */
package com.hospital.surveyinbox.processing;
