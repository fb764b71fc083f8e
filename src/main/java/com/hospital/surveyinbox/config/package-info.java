/**
 * Cross-cutting wiring: the {@code adapter.*} settings tree, HTTP security for the legacy sender and
 * operators, Kafka topic provisioning and the Camel component tuning that routes cannot express.
 */
package com.hospital.surveyinbox.config;
