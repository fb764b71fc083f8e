/**
 * Cross-cutting wiring: the {@code adapter.*} settings tree, HTTP security for the legacy sender and
 * operators, the internal-header filter, the production safety check and Quartz's shutdown order.
 */
package com.hospital.surveyinbox.config;
