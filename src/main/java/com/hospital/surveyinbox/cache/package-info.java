/**
 * The Redis cache in front of the slow legacy consent lookup, and its policy: per-srvyNo keys, empty
 * lists cached, "not configured" never cached, Redis failures fall back to the call.
 */
package com.hospital.surveyinbox.cache;
