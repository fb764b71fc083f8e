package com.hospital.surveyinbox.support;

import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.processing.Outcome;
import com.hospital.surveyinbox.processing.ProcessingRecord;
import org.apache.camel.ProducerTemplate;

/**
 * Runs the processing route's fenced outcome statements ({@code sql/complete-row.sql},
 * {@code sql/fail-row.sql}) through the same camel-sql endpoints and parameters as
 * {@code routes/inbox-process.camel.yaml}, for tests that play a worker by hand.
 */
public final class RowOutcomes {

    private final ProducerTemplate producer;
    private final ProcessingRecord record;

    public RowOutcomes(ProducerTemplate producer, ProcessingRecord record) {
        this.producer = producer;
        this.record = record;
    }

    /** True when this claim completed the row; false when the claim was stale (nothing changed). */
    public boolean complete(ClaimedRow row) {
        return "COMPLETED".equals(producer.requestBody("sql:classpath:sql/complete-row.sql?outputType=SelectOne&parametersCount=8",
                record.params(row, Outcome.completed()), String.class));
    }

    /** The status written (FAILED or DEAD), or null when the claim was stale. */
    public String fail(ClaimedRow row, String reason) {
        return producer.requestBody("sql:classpath:sql/fail-row.sql?outputType=SelectOne&parametersCount=13",
                record.params(row, Outcome.businessFailure("TEST", reason)), String.class);
    }
}
