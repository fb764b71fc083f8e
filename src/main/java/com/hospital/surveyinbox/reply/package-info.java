/**
 * Replies to the legacy system (DEAD, NOTIFY_SKIPPED, ALREADY_SUBMITTED) as a tracked obligation on the
 * row: claimed by one sender, recorded as SENT or FAILED, retried by the redelivery job.
 */
package com.hospital.surveyinbox.reply;
