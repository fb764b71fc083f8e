package com.hospital.surveyinbox.inbox;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.stereotype.Component;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.TransactionException;

/**
 * Tells "the database cannot be reached or will not take work now" — worth a 503 and a retry by the
 * sender — from "the database refused this row" — which retrying cannot fix, and which must stay that
 * one reception's problem. Decided on the SQLState of the innermost {@link SQLException}, not on Spring's
 * exception type: Spring files some refusals of a single row (e.g. 54000, an index row too large) under
 * "resource failure". {@link #unavailable} is asked by the routes' error clauses and choices
 * ({@code inbox-ops-unavailable}, {@code inbox-process-row-database-busy}, {@code inbox-register-when-database-unavailable},
 * the reception's) and by {@code GroupInsert}; {@link #unreachable} by {@code GroupInsert}, to fail the receptions
 * queued behind a write, and {@link #conflicted} to write a group that lost a race row by row.
 */
@Component("databaseFailures")
public class DatabaseFailures {

    /**
     * True for: no connection from the pool; SQLState class 08 (connection exception); 57P01/57P02/57P03 (the
     * server is shutting down or not yet accepting); 57014 and 55P03 (statement_timeout, lock_timeout: the
     * database is too slow to answer now); 25006 (a read-only transaction: the connection reached a standby, or the
     * primary demoted in a failover); class 53 (too many connections, disk full, out of memory: the server's
     * resources, not the row); 40001 and 40P01 (serialization failure, deadlock: retrying is their cure). Each
     * was a 500 "a retry cannot fix" to the sender (who then never sends again: the message lost) and left a
     * worker's row PROCESSING instead of trying its statement again.
     */
    public static boolean unavailable(Throwable failure) {
        String state = firstState(failure);
        return state != null && (state.equals(NO_CONNECTION) || state.startsWith("08") || state.startsWith("57P")
                || state.equals("57014") || state.equals("55P03") || state.equals("25006") || state.startsWith("53")
                || state.equals("40001") || state.equals("40P01"));
    }

    /**
     * What a reception answers 503 "please retry" for: {@link #unavailable}, and the server's own failure while the
     * row was written — class 58 and XX (an I/O error, an internal error, corruption) and 42501 (a privilege revoked:
     * the deployment's) — which is not the row's either: it was a 500 "could not be stored", which a sender takes
     * for a message never to send again. Not unavailability elsewhere: such an error can follow one value (a
     * corrupt index page, an internal error for one row), so a group meeting it is still written row by row (only
     * that row's sender answered 503) and a worker's statement is not deferred for ever.
     */
    public static boolean retryLater(Throwable failure) {
        String state = firstState(failure);
        return unavailable(failure)
                || state != null && (state.startsWith("58") || state.startsWith("XX") || state.equals("42501"));
    }

    /**
     * True when the database cannot be reached at all (no connection from the pool, SQLState class 08, 57P0x): not
     * one statement's bad luck (a statement or lock timeout, a deadlock), which the next statement may not share.
     */
    public static boolean unreachable(Throwable failure) {
        String state = firstState(failure);
        return state != null && (state.equals(NO_CONNECTION) || state.startsWith("08") || state.startsWith("57P"));
    }

    /**
     * True when the failure is a socket timeout: the statement was sent (the driver reads only after sending) and no
     * answer came in time; the server may still complete it (an autocommit INSERT waiting for a synchronous standby).
     * Not a connection found closed at a fast shutdown or a switchover (08006 or 57P01 before the statement ran).
     */
    public static boolean answerTimedOut(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.net.SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /**
     * True when a statement may have reached the server and its answer was lost: SQLState 08006 (the connection
     * failed while in use: a socket timeout, a reset), 08000 and 08007 (transaction resolution unknown), 57P01 and
     * 57P02 (the backend ended while it worked: a COMMIT waiting for a synchronous standby has committed locally then).
     * Not a connection that could not be made (08001, 08004, no connection from the pool) nor one closed before use
     * (08003): nothing was sent on those.
     */
    public static boolean answerLost(Throwable failure) {
        String state = firstState(failure);
        return "08006".equals(state) || "08000".equals(state) || "08007".equals(state)
                || "57P01".equals(state) || "57P02".equals(state);
    }

    /**
     * True for a deadlock or serialization failure (40P01, 40001): the transaction lost a race with another, which
     * was let through; the same rows written again, alone, are not in that race.
     */
    public static boolean conflicted(Throwable failure) {
        String state = firstState(failure);
        return "40P01".equals(state) || "40001".equals(state);
    }

    /** What {@link #firstState} answers for "no connection from the pool" (never an SQLState: those are five characters). */
    private static final String NO_CONNECTION = "no connection";

    /**
     * The failure's first word on the database, walking its causes: {@link #NO_CONNECTION} for a connection the pool
     * could not give, else the first SQLState found; null when there is neither.
     */
    private static String firstState(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            // a rollback that failed after the statement did (TransactionTemplate: "application exception overridden by
            // rollback exception"): the statement's failure says what happened, the rollback's chain may carry no state
            if (t instanceof org.springframework.transaction.TransactionSystemException rollback
                    && rollback.getApplicationException() != null && rollback.getApplicationException() != failure) {
                String applied = firstState(rollback.getApplicationException());
                if (applied != null) {
                    return applied;
                }
            }
            if (t instanceof CannotGetJdbcConnectionException || t instanceof CannotCreateTransactionException
                    || t instanceof SQLTransientConnectionException) {
                return NO_CONNECTION;
            }
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                return sql.getSQLState();
            }
        }
        return null;
    }

    /**
     * True when the database refused this row (a {@link DataAccessException} or {@link TransactionException}
     * anywhere in the chain) — a retry would be refused again. Asked after {@link #unavailable}.
     */
    public static boolean refusedRow(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof DataAccessException || t instanceof TransactionException) {
                return true;
            }
        }
        return false;
    }
}
