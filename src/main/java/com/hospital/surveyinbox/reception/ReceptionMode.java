package com.hospital.surveyinbox.reception;

import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import org.apache.camel.Exchange;
import org.springframework.stereotype.Component;

/**
 * Chooses the reception path ({@code routes/inbox-receive.camel.yaml}, step {@code inbox-receive-choose-path}).
 * With the rollback toggle {@code adapter.inbox.enabled=false} a message is registered synchronously —
 * unless its subject still has rows draining through the inbox: then it joins them, so a SUBMIT can never
 * overtake its SEND. The consumer and the redelivery job ignore the toggle and keep draining; this is the
 * only place that reads it.
 */
@Component("receptionMode")
public class ReceptionMode {

    public static final String PATH = "receptionPath";
    public static final String INBOX = "inbox";
    public static final String SYNCHRONOUS = "synchronous";

    private final AdapterProperties properties;
    private final InboxStore store;

    public ReceptionMode(AdapterProperties properties, InboxStore store) {
        this.properties = properties;
        this.store = store;
    }

    public void choose(Exchange exchange) {
        ReceivedMessage message = exchange.getMessage().getBody(ReceivedMessage.class);
        boolean synchronous = !properties.getInbox().isEnabled() && !store.hasUnfinished(message.srvyDrawupNo());
        exchange.setProperty(PATH, synchronous ? SYNCHRONOUS : INBOX);
    }
}
