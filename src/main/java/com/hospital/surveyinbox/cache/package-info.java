/**
 * The consent cache's Java half: the per-srvyNo turn that lets concurrent misses share one lookup, the
 * TTL and the counters. The policy itself is {@code routes/inbox-consents.camel.yaml} over camel-spring-redis.
 */
package com.hospital.surveyinbox.cache;
