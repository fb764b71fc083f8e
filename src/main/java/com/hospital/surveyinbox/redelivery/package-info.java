/**
 * The clustered redelivery job: republishes the events of stalled rows (lost events, due retries, stuck
 * workers) and re-sends undelivered replies. It never processes a row itself — recovery runs through
 * the same consumer code as normal processing (case study §3.5).
 */
package com.hospital.surveyinbox.redelivery;
