package dev.offlinepreload.keycloak;

import org.keycloak.models.jpa.session.PersistentClientSessionEntity;
import org.keycloak.models.session.PersistentClientSessionModel;
import org.keycloak.storage.StorageId;

/**
 * An OFFLINE_CLIENT_SESSION row as the loader reads it, for {@code PersistentAuthenticatedClientSessionAdapter}: what
 * Keycloak's own {@code ImmutablePersistentClientSessionEntity} is from 26.6 on, here for every supported minor. DATA
 * is not kept here ({@link SessionData} parses it for the whole batch).
 */
record ReadOnlyClientSession(String userSessionId, String clientId, String clientStorageProvider, String externalClientId,
                             int timestamp) implements PersistentClientSessionModel {

    @Override
    public String getUserSessionId() {
        return userSessionId;
    }

    /** The client's id as Keycloak resolves it: a client of a client storage provider gets its storage id. */
    @Override
    public String getClientId() {
        return PersistentClientSessionEntity.LOCAL.equals(externalClientId) ? clientId : new StorageId(clientStorageProvider, externalClientId).getId();
    }

    @Override
    public int getTimestamp() {
        return timestamp;
    }

    @Override
    public String getData() {
        return null;
    }

    @Override
    public void setUserSessionId(String userSessionId) {
        throw ReadOnlyUserSession.readOnly();
    }

    @Override
    public void setClientId(String clientId) {
        throw ReadOnlyUserSession.readOnly();
    }

    @Override
    public void setTimestamp(int timestamp) {
        throw ReadOnlyUserSession.readOnly();
    }

    @Override
    public void setData(String data) {
        throw ReadOnlyUserSession.readOnly();
    }
}
