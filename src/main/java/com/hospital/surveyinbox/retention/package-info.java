/**
 * Retention of patient data: a clustered job removes the payload of closed rows after their retention
 * period and keeps the metadata, the attempt history and the audit trail.
 */
package com.hospital.surveyinbox.retention;
