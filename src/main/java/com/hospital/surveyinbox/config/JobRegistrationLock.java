package com.hospital.surveyinbox.config;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.apache.camel.CamelContext;
import org.apache.camel.support.LifecycleStrategySupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * One instance at a time starts its Camel routes: a PostgreSQL advisory lock, taken when the context starts and
 * released once its routes run. Found by the production-shape harness: three pods started at once on a new
 * database each stored the clustered Quartz job of inbox-redeliver; Quartz stores it outside a transaction
 * (Spring's job store, called during Camel's route warm-up), so its own row lock did not serialize them, and
 * one pod died at start with a duplicate key on qrtz_job_details. Under this lock the second instance finds
 * the job and only reads it. A start that cannot get the lock within a minute ({@link #TIMEOUT_MILLIS}: several
 * instances' route starts, a few seconds each) goes ahead without it (a warning): a stuck holder must not keep
 * every pod from starting.
 */
@Component
public class JobRegistrationLock extends LifecycleStrategySupport {

    private static final Logger log = LoggerFactory.getLogger(JobRegistrationLock.class);
    /** The lock's key: the advisory-lock space of this service (0x1B0C…), "job registration". */
    static final long KEY = 0x1B0C_0000_0002L;

    /** Longest wait for the lock before a start goes ahead without it. */
    public static final long TIMEOUT_MILLIS = 60_000;

    private final DataSource dataSource;
    private Connection held;

    public JobRegistrationLock(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    @Override
    public synchronized void onContextStarting(CamelContext context) {
        Connection connection = null;
        try {
            connection = dataSource.getConnection();
            connection.setAutoCommit(true);
            // the pool's bounds (socketTimeout, and the server's statement_timeout and lock_timeout under it, see
            // MainPoolStatementBound) lifted for this one wait: with them a start waited 4 s, not a minute, before
            // it went ahead without the lock. The pool restores the network timeout when the connection returns
            connection.setNetworkTimeout(Runnable::run, (int) TIMEOUT_MILLIS + 5_000);
            try (Statement s = connection.createStatement()) {
                s.execute("SET statement_timeout = " + (TIMEOUT_MILLIS + 1_000));
                s.execute("SET lock_timeout = " + TIMEOUT_MILLIS);
                try {
                    s.execute("SELECT pg_advisory_lock(" + KEY + ")");
                } finally {
                    s.execute("RESET statement_timeout"); // a pooled connection goes back as it came
                    s.execute("RESET lock_timeout");
                }
            }
            held = connection;
        } catch (SQLException e) {
            log.warn("Starting routes without the job-registration lock ({}): instances starting at once on a new "
                    + "database may race to store the clustered jobs", LoggedFailure.describe(e));
            close(connection);
        }
    }

    @Override
    public void onContextStarted(CamelContext context) {
        release();
    }

    @Override
    public void onContextStopped(CamelContext context) {
        release(); // a start that failed half-way
    }

    synchronized void release() {
        if (held == null) {
            return;
        }
        try (Statement s = held.createStatement()) {
            s.execute("SELECT pg_advisory_unlock(" + KEY + ")");
        } catch (SQLException e) {
            log.debug("Job-registration lock released with its connection ({})", e.getClass().getSimpleName());
        }
        close(held);
        held = null;
    }

    private static void close(Connection connection) {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // the pool discards it
            }
        }
    }
}
