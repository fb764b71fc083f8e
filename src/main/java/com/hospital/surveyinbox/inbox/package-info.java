/**
 * The inbox table and its state machine: insert at reception, the atomic claim with the per-subject
 * ordering guard, fenced outcome writes, the reply obligation, and the event that triggers processing.
 * Every state change is one conditional UPDATE whose row count is checked.
 */
package com.hospital.surveyinbox.inbox;
