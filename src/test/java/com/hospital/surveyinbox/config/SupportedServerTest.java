package com.hospital.surveyinbox.config;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * A server the migrations cannot run on is refused at the start's first connection, naming its version: V25 calls
 * gen_random_uuid() (built in from 13, pgcrypto's on 12), so on 12 without pgcrypto every new pod failed V25 half-way
 * into a rollout and crash-looped on "function gen_random_uuid() does not exist". 12 with pgcrypto passes, and the
 * servers the suite runs (17) pass through every start.
 */
class SupportedServerTest {

    @Test
    void aServerWithoutWhatTheMigrationsCallIsRefusedByName() {
        assertThatThrownBy(() -> FlywayConnection.requireSupportedServer(12, "12.19 (Debian 12.19-1)", false))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("PostgreSQL 13 or later is required (12 with the pgcrypto extension); this server is"
                        + " 12.19 (Debian 12.19-1) without gen_random_uuid() (docs/deploying.md)");
        assertThatThrownBy(() -> FlywayConnection.requireSupportedServer(11, "11.22", true))
                .hasMessage("PostgreSQL 13 or later is required (12 with the pgcrypto extension); this server is 11.22 (docs/deploying.md)");
        assertThatCode(() -> FlywayConnection.requireSupportedServer(12, "12.19", true)).as("pgcrypto").doesNotThrowAnyException();
        assertThatCode(() -> FlywayConnection.requireSupportedServer(13, "13.0", true)).doesNotThrowAnyException();
    }
}
