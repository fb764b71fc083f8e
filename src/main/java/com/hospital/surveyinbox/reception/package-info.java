/**
 * The legacy-facing endpoint {@code POST /legacy/survey-send-info}: the body cap on the stream, the
 * required-field validation (only what makes a message unrecoverable), and the contract's response shape.
 */
package com.hospital.surveyinbox.reception;
