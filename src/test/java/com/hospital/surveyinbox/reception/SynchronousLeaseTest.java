package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.config.MainPoolStatementBound;
import com.hospital.surveyinbox.config.ProductionSafetyCheck;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.support.TestProperties;
import com.zaxxer.hikari.HikariDataSource;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

/**
 * A subject's synchronous lease (rollback toggle) is a dead pod's only once twice as old as a registration can last,
 * counted with the database waits the pool really has. A JDBC URL's {@code ?socketTimeout=30} (documented, and
 * winning over the property) was not counted: the lease read the property's 4 s, expired mid-registration, and a
 * second pod registered the subject beside the first (a SUBMIT before its bundle, a resend twice).
 */
class SynchronousLeaseTest {

    @Test
    void theLeaseOutlastsARegistrationWithTheSocketTimeoutThePoolUses() {
        AdapterProperties properties = TestProperties.bind(Map.of());
        MockEnvironment environment = new MockEnvironment()
                .withProperty("spring.datasource.hikari.data-source-properties.socketTimeout", "4")
                .withProperty("spring.datasource.hikari.connection-timeout", "2000");
        try (HikariDataSource pool = new HikariDataSource()) { // never started: no database needed
            pool.setJdbcUrl("jdbc:postgresql://db.invalid/inbox?socketTimeout=30");
            pool.setConnectionTimeout(2000);
            pool.addDataSourceProperty("socketTimeout", "4");
            new MainPoolStatementBound().postProcessAfterInitialization(pool, "dataSource"); // the URL's 30 s wins

            Object expiry = new SynchronousRegistration(properties, environment, pool, new io.micrometer.core.instrument.simple.SimpleMeterRegistry())
                    .lease(new ReceivedMessage("S-LEASE", "SEND", new byte[0], null)).get("expireAfterMillis");

            assertThat(expiry).isEqualTo(2 * ProductionSafetyCheck.synchronousRegistrationMillis(properties.getHttp(), 2_000 + 30_000));
        }
    }
}
