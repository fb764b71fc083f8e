package com.hospital.surveyinbox.ops;

import com.hospital.surveyinbox.inbox.InboxStatus;
import java.util.List;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Query;

/** Operator reads of the inbox (newest first). */
public interface InboxRowRepository extends JpaRepository<InboxRowEntity, Long> {

    @Query(value = "SELECT status, count(*) FROM inbox_message GROUP BY status", nativeQuery = true)
    List<Object[]> countByStatus();

    /** Age in seconds of the oldest row that still owes work, measured on the database clock. */
    @Query(value = """
            SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)
              FROM inbox_message
             WHERE status IN\s""" + InboxStatus.UNFINISHED_SQL, nativeQuery = true)
    double oldestPendingAgeSeconds();
}
