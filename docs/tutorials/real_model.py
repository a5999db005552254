# %% [markdown]
# # real_model

# %%
print(1 + 1)
