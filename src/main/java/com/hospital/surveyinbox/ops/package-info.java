/**
 * The operator API under {@code /ops/inbox}: counts, listings and row detail read through JPA (never the
 * payload or patient data), and operator actions.
 */
package com.hospital.surveyinbox.ops;
