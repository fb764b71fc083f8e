package com.hospital.surveyinbox.support;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A deferred constraint trigger that fails the transaction at COMMIT, after the INSERT itself succeeded,
 * for rows whose subject matches a LIKE pattern. Closing it drops the trigger.
 */
public final class CommitRefusal implements AutoCloseable {

    public static final String MESSAGE = "commit refused by test trigger";

    private final JdbcTemplate jdbc;

    private CommitRefusal(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    public static CommitRefusal forSubjectsLike(JdbcTemplate jdbc, String likePattern) {
        return forSubjectsLike(jdbc, likePattern, "P0001"); // RAISE EXCEPTION's own SQLState
    }

    /** The same, failing with the given SQLState (a server's I/O error, an internal error, a privilege revoked …). */
    public static CommitRefusal forSubjectsLike(JdbcTemplate jdbc, String likePattern, String sqlState) {
        jdbc.execute("CREATE OR REPLACE FUNCTION test_refuse_commit() RETURNS trigger AS $$ BEGIN "
                + "IF NEW.srvy_drawup_no LIKE '" + likePattern.replace("'", "''") + "' THEN RAISE EXCEPTION '" + MESSAGE + "' "
                + "USING ERRCODE = '" + sqlState.replace("'", "''") + "'; "
                + "END IF; RETURN NEW; END $$ LANGUAGE plpgsql");
        jdbc.execute("CREATE CONSTRAINT TRIGGER test_refuse_commit AFTER INSERT ON inbox_message "
                + "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_refuse_commit()");
        return new CommitRefusal(jdbc);
    }

    @Override
    public void close() {
        jdbc.execute("DROP TRIGGER IF EXISTS test_refuse_commit ON inbox_message");
        jdbc.execute("DROP FUNCTION IF EXISTS test_refuse_commit()");
    }
}
