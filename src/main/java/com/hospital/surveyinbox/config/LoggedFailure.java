package com.hospital.surveyinbox.config;

import java.sql.SQLException;

/**
 * What a log line may say of an exception: the class of each cause, the SQLState of a database error and
 * where the innermost one was thrown — never a message. Messages carry data: PostgreSQL's "Failing row
 * contains (…)" detail holds the row (payload included), Jackson quotes the token it could not read, and
 * an HTTP client's message holds the URL (a patient number in its path) or the downstream's body. Every
 * log line of the service that concerns a failure uses this instead of the exception itself; routes call it as
 * bean {@code loggedFailure} ({@code ${bean:loggedFailure?method=line(${exception})}}).
 */
@org.springframework.stereotype.Component("loggedFailure")
public final class LoggedFailure {

    /** {@link #describe(Throwable)}, for a route's log line. */
    public String line(Throwable failure) {
        return describe(failure);
    }

    /** e.g. {@code DataIntegrityViolationException <- PSQLException[SQLState 23514] at QueryExecutorImpl.java:2733}. */
    public static String describe(Throwable failure) {
        if (failure == null) {
            return "no exception";
        }
        StringBuilder text = new StringBuilder();
        Throwable innermost = failure;
        int depth = 0;
        for (Throwable t = failure; t != null && depth < 10; t = t.getCause() == t ? null : t.getCause(), depth++) {
            if (!text.isEmpty()) {
                text.append(" <- ");
            }
            text.append(t.getClass().getSimpleName());
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                text.append("[SQLState ").append(sql.getSQLState()).append(']');
            }
            innermost = t;
        }
        StackTraceElement[] frames = innermost.getStackTrace();
        if (frames.length > 0 && frames[0].getFileName() != null) {
            text.append(" at ").append(frames[0].getFileName()).append(':').append(frames[0].getLineNumber());
        }
        return text.toString();
    }
}
