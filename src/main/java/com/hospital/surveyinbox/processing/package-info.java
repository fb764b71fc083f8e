/**
 * The consumer half: claim a row, run the registration flow against the legacy, account and survey
 * APIs, and record exactly one outcome per attempt on the row — the single retry ledger.
 */
package com.hospital.surveyinbox.processing;
