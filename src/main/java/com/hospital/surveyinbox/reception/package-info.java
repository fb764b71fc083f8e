/**
 * The legacy-facing endpoint {@code POST /legacy/survey-send-info}: the body cap on the stream, the
 * required-field validation (only what makes a message unrecoverable), the contract's response shape,
 * the platform-http engine that answers in one servlet dispatch, and the rollback toggle's answer.
 */
package com.hospital.surveyinbox.reception;
