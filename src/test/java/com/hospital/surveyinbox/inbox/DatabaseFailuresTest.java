package com.hospital.surveyinbox.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.transaction.TransactionSystemException;

/**
 * A claim's statement failing on a dead pooled connection, then its rollback failing too: TransactionTemplate throws
 * the rollback's exception ("application exception overridden by rollback exception"), whose own chain may carry no
 * SQLState. Read as "not the database's unavailability", the claim's minute of tries ended at its second try and the
 * row waited for stuck-processing-after: the likely cause of a DatabaseCutAfterCallTest failure on a clean clone (its
 * second try met a dead pooled connection, the rollback failed, the route's generic clause took it; the row was
 * charged twice). The statement's failure now decides.
 */
class DatabaseFailuresTest {

    @Test
    void aFailedRollbackIsJudgedByTheStatementsFailure() {
        TransactionSystemException rollback = new TransactionSystemException("JDBC rollback failed",
                new SQLException("Connection is closed"));
        rollback.initApplicationException(new DataAccessResourceFailureException("PreparedStatementCallback",
                new SQLException("An I/O error occurred while sending to the backend.", "08006")));

        assertThat(DatabaseFailures.unavailable(rollback)).isTrue();
        assertThat(DatabaseFailures.unreachable(rollback)).isTrue();

        TransactionSystemException refused = new TransactionSystemException("JDBC rollback failed", new SQLException("closed"));
        refused.initApplicationException(new SQLException("value too long", "22001"));
        assertThat(DatabaseFailures.unavailable(refused)).as("a row's own refusal stays one").isFalse();
    }
}
